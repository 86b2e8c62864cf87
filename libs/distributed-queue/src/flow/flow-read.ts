import type { DelayQueueStore } from '../delay/delay-queue.store';
import type { FlowInfo, FlowNodeInfo, FlowNodeState, FlowState, TaskErrorInfo } from '../interfaces';
import { flowNodeId } from './flow-keys';
import type { FlowStore } from './flow.store';

/** Nodes per page read (one call each), and tasks read at once (their states). */
const PAGE = 100;
const LIVE_BATCH = 500;
const SETTLED: Record<string, FlowNodeState> = { c: 'completed', x: 'dead', k: 'cancelled' };

/** A flow's meta as `FlowInfo` without its nodes. */
export function flowSummary(flowId: string, meta: Record<string, string>): Omit<FlowInfo, 'nodes'> {
  const n = (name: string): number => Number(meta[name] ?? 0);
  const summary: Omit<FlowInfo, 'nodes'> = {
    id: flowId,
    state: meta.state as FlowState,
    createdAt: n('created'),
    counts: { total: n('total'), completed: n('done'), dead: n('dead'), cancelled: n('cancelled'), blocked: n('blocked') },
  };
  if (meta.ended) summary.endedAt = Number(meta.ended);
  return summary;
}

/**
 * Reads a flow: its meta, then its nodes page by page (their settled states from the flow's record; the
 * others' from their tasks). `withNodes` false: the meta only. null when the flow does not exist.
 */
export async function readFlow(flows: FlowStore, store: DelayQueueStore, flowId: string, withNodes = true): Promise<FlowInfo | null> {
  if (!withNodes) {
    const meta = await flows.meta(flowId);
    return meta ? { ...flowSummary(flowId, meta), nodes: [] } : null;
  }
  let cursor = '0';
  let info: FlowInfo | null = null;
  const read: { node: FlowNodeInfo; parkType: string; unsettled: boolean; state: string; policy: string; index: number }[] = [];
  do {
    const page = await flows.page(flowId, cursor, PAGE);
    if (!page) return null;
    info ??= { ...flowSummary(flowId, page.meta), nodes: [] };
    cursor = page.cursor;
    for (const { ref, def, state, blocking, json } of page.nodes) {
      const node: FlowNodeInfo = { ref, type: def.t, id: flowNodeId(flowId, ref), state: SETTLED[state] ?? (blocking > 0 ? 'blocked' : 'pending'), dependsOn: def.d, onFailure: def.f };
      if (def.k !== undefined) node.key = def.k;
      if (state === 'c' && json !== '') node.result = JSON.parse(json);
      if (state === 'x' && json !== '') node.error = JSON.parse(json) as TaskErrorInfo;
      read.push({ node, parkType: def.pt, unsettled: state === '' && blocking === 0, state, policy: def.f, index: def.i ?? 0 });
    }
  } while (cursor !== '0');
  // NOTE: a node some of whose dependencies have not completed is parked (pending): only the others' tasks
  // are read (released nodes: waiting, running, or being recorded).
  const byRef = new Map(read.map((r) => [r.node.ref, r]));
  const satisfied = (ref: string): boolean => {
    const dep = byRef.get(ref);
    return dep !== undefined && (dep.state === 'c' || (dep.state === 'x' && dep.policy === 'ignore'));
  };
  const live = read.filter((r) => r.unsettled && r.node.dependsOn.every(satisfied));
  for (let i = 0; i < live.length; i += LIVE_BATCH) {
    const batch = live.slice(i, i + LIVE_BATCH);
    const states = await Promise.all(batch.map(({ node, parkType }) => store.get(parkType, node.id)));
    batch.forEach(({ node, parkType }, j) => (node.state = liveState(states[j].state, parkType !== node.type)));
  }
  info!.nodes = read.sort((a, b) => a.index - b.index).map((r) => r.node);
  return info;
}

/** A node's state from its task's (`ordered`: the task in the route's delay type, until it enters its partition). */
function liveState(state: string, ordered: boolean): FlowNodeState {
  if (state === 'pending' || state === 'delayed' || state === 'ready' || state === 'running') return state;
  if (state === 'dead') return 'dead';
  // NOTE: an ordered node gone from the delay type is in its partition; a delay-queue one not written yet
  // (a flow still creating) is pending; a finished one is being recorded in the flow.
  if (ordered && state === 'unknown') return 'ready';
  return state === 'done' ? 'running' : 'pending';
}
