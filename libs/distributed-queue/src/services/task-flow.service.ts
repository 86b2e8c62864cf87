import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'crypto';
import { DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, FLOW_PROGRESS } from '../distributed-queue.constants';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { InvalidFlowError, NoRedisConnectionError } from '../errors';
import { DelayQueueStore, type NewTask } from '../delay/delay-queue.store';
import type { FlowCancelResult, FlowInfo, FlowNode, FlowSubmitResult, SubmitFlowOptions } from '../interfaces';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { newRequestId } from '../runtime/request-id';
import { FlowEvents, type FlowEndedListener } from '../flow/flow-events';
import { checkFlowId } from '../flow/flow-graph';
import { checkLimit, checkOffset } from './task-input';
import { planFlow, type PlannedNode } from '../flow/flow-plan';
import type { FlowProgress } from '../flow/flow-progress';
import type { FlowStore } from '../flow/flow.store';
import { readFlow } from '../flow/flow-read';
import { setEntry } from '../runtime/own-entry';

/** Nodes per write call, and the dependencies they may name in all: bound the time one script holds Redis. */
const NODES_PER_CALL = 100;
const EDGES_PER_CALL = 2_000;

/**
 * Flows: tasks that wait for other tasks, of any types, delay-queue or ordered, on any cluster masters.
 * `submitFlow` writes a DAG of nodes at once; a node starts once every node it depends on has completed
 * and reads their results in `task.flow`. A node starts at most once whatever crashes (see `FlowProgress`).
 */
@Injectable()
export class TaskFlowService {
  /** @internal Nest creates it (dependency injection): inject the class, do not construct it. */
  constructor(
    private readonly explorer: DistributedQueueExplorer,
    private readonly store: DelayQueueStore,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Inject(FLOW_PROGRESS) private readonly progress: FlowProgress | null,
    private readonly events: FlowEvents,
  ) {}

  private get flows(): FlowStore {
    if (!this.progress) throw new NoRedisConnectionError('Flows');
    return this.progress.store;
  }

  /**
   * Submits a flow: every node is written before any starts; the nodes without dependencies start at once
   * (after their `delay`). Refused before anything is written: a cycle, an unknown ref or type, a duplicate
   * ref, an ordered node without a key, a bad option or payload.
   * @throws InvalidFlowError, PayloadTooLargeError
   */
  async submitFlow(nodes: FlowNode[], options: SubmitFlowOptions = {}): Promise<FlowSubmitResult> {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) throw new InvalidFlowError('options must be an object { id? }');
    const unknown = Object.keys(options).find((name) => name !== 'id');
    if (unknown !== undefined) throw new InvalidFlowError(`unknown option "${unknown}" (known: id)`);
    const flowId = options.id === undefined ? randomBytes(16).toString('hex') : checkFlowId(options.id);
    const planned = planFlow(nodes, flowId, this.explorer, this.options);
    const flows = this.flows;
    const result: FlowSubmitResult = { id: flowId, created: true, nodes: {} };
    for (const node of planned) setEntry(result.nodes, node.ref, { type: node.def.t, id: node.id });
    // NOTE: 3 steps in turn: the record, then the parked nodes, then the roots (a root may complete at once:
    // its dependents must be parked by then). A repeat (the same id) finds what exists and writes the rest.
    const open: PlannedNode[] = [];
    // NOTE: the record keeps no payload (the nodes' tasks do): a define call's size is its nodes and edges.
    const list = batches(planned, (n) => 1 + (n.def.d.length + n.def.n.length) / 100, 2_000);
    for (const [i, batch] of list.entries()) {
      const { created, ended, settled } = await flows.define(flowId, planned.length, i === list.length - 1, batch);
      if (i === 0 && !created) result.created = false;
      open.push(...batch.filter((_, j) => !settled[j]));
      this.events.ended(flowId, ended);
    }
    await this.park(open.filter((n) => n.def.d.length > 0));
    await Promise.all([this.submitRoots(open.filter((n) => n.def.d.length === 0)), result.created && flows.indexed(flowId, Date.now())]);
    return result;
  }

  /**
   * A flow and every node's state (a node waiting for its task: its task's state), or null when no flow
   * has this id (never submitted, or ended longer ago than `flows.retentionMs`).
   */
  async getFlow(flowId: string): Promise<FlowInfo | null> {
    return readFlow(this.flows, this.store, checkFlowId(flowId));
  }

  /**
   * Cancels what has not run: parked and waiting nodes never start, running ones get their abort signal
   * (and are not retried). Ordered nodes already in their partition run. The flow ends `cancelled`.
   * Unknown flows: nothing to do.
   */
  async cancelFlow(flowId: string): Promise<FlowCancelResult> {
    const flows = this.flows;
    const out: FlowCancelResult = { cancelled: 0, cancelRequested: 0 };
    let cursor = '0';
    do {
      const page = await flows.cancelPage(checkFlowId(flowId), cursor, 200);
      if (!page) return out;
      cursor = page.cursor;
      const byType = new Map<string, { id: string; deps: string[]; type: string }[]>();
      for (const [ref, def] of page.nodes) {
        const list = byType.get(def.pt) ?? [];
        list.push({ id: `&${flowId}:${ref}`, deps: def.d, type: def.t });
        byType.set(def.pt, list);
      }
      for (const [parkType, list] of byType) {
        const parked = await flows.unpark(parkType, list);
        for (let i = 0; i < list.length; i++) {
          if (parked[i]) {
            out.cancelled++;
            continue;
          }
          const outcome = await this.store.cancel(parkType, list[i].id);
          if (outcome === 'cancelled') out.cancelled++;
          else if (outcome === 'cancel-requested') out.cancelRequested++;
        }
      }
      this.events.ended(flowId, page.ended);
    } while (cursor !== '0');
    return out;
  }

  /**
   * The newest flows (their ids, state and counts), newest first: the dashboard's list.
   * @default offset 0, limit 50
   * @throws InvalidArgumentError for an offset that is not an integer from 0, or a limit not from 1 to 1000
   */
  async listFlows(offset = 0, limit = 50): Promise<Omit<FlowInfo, 'nodes'>[]> {
    checkOffset(offset);
    checkLimit(limit);
    const flows = this.flows;
    const ids = await flows.newest(offset, limit);
    const read = await Promise.all(ids.map((id) => readFlow(flows, this.store, id, false)));
    await flows.unindex(ids.filter((_, i) => read[i] === null));
    return read.filter((f): f is FlowInfo => f !== null).map(({ nodes: _nodes, ...flow }) => flow);
  }

  /**
   * Listens to the flow ends this process made (its worker ran a flow's last node, or it cancelled the flow):
   * each end is heard by exactly one instance's local listeners (unless it dies first). Returns the removal.
   */
  onFlowEnded(listener: FlowEndedListener): () => void {
    return this.events.on(listener);
  }

  /**
   * Listens to every flow end in the fleet (published on `<prefix>:events:flows`; heard while connected,
   * at most once). Resolves with the removal once subscribed.
   */
  followFlowEnds(listener: FlowEndedListener): Promise<() => Promise<void>> {
    return this.events.follow(listener);
  }

  /** Parks the nodes that wait (per type in parallel, each type's batches in turn). */
  private async park(nodes: PlannedNode[]): Promise<void> {
    const flows = this.flows;
    await Promise.all(
      [...byParkType(nodes)].map(async ([type, list]) => {
        for (const batch of batches(list, (n) => n.def.d.length, EDGES_PER_CALL)) {
          await flows.park(type, batch.map((n) => ({ id: n.id, delay: n.def.dl ?? 0, priority: n.def.p, group: n.def.g, deps: n.def.d, payload: n.payload })));
        }
      }),
    );
  }

  /** Submits the roots (deterministic ids: a repeat creates nothing), per type in parallel. */
  private async submitRoots(roots: PlannedNode[]): Promise<void> {
    await Promise.all(
      [...byParkType(roots)].map(async ([type, list]) => {
        for (const batch of batches(list, () => 1, NODES_PER_CALL)) {
          const tasks: NewTask[] = batch.map((n) => ({ id: n.id, due: { delay: n.def.dl ?? 0 }, payload: n.payload, priority: n.def.p, group: n.def.g }));
          await this.store.submit(type, tasks, newRequestId());
        }
      }),
    );
  }
}

function byParkType(nodes: PlannedNode[]): Map<string, PlannedNode[]> {
  const out = new Map<string, PlannedNode[]>();
  for (const node of nodes) {
    const list = out.get(node.def.pt) ?? [];
    list.push(node);
    out.set(node.def.pt, list);
  }
  return out;
}

/** Splits `items` into batches of at most NODES_PER_CALL items and `budget` of `cost`. */
function batches<T>(items: T[], cost: (item: T) => number, budget: number): T[][] {
  const out: T[][] = [];
  let batch: T[] = [];
  let spent = 0;
  for (const item of items) {
    const c = cost(item);
    if (batch.length > 0 && (batch.length >= NODES_PER_CALL || spent + c > budget)) {
      out.push(batch);
      batch = [];
      spent = 0;
    }
    batch.push(item);
    spent += c;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}
