import { FlowResultError } from '../errors';
import type { TaskErrorInfo, TaskFlow } from '../interfaces';
import { FlowEvents } from './flow-events';
import { flowNodeId, parseFlowNodeId } from './flow-keys';
import type { CascadeStep, FlowStore, SettleReply } from './flow.store';
import { setEntry } from '../runtime/own-entry';

/** A node's outcome waiting for the next flush. */
interface Settling {
  flowId: string;
  ref: string;
  outcome: 'c' | 'x';
  json: string;
  resolve: () => void;
  reject: (error: unknown) => void;
  error?: unknown;
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const list = out.get(key(item));
    if (list) list.push(item);
    else out.set(key(item), [item]);
  }
  return out;
}

/** Nodes of one flow per settle call. */
const SETTLE_BATCH = 100;
/** Dependents per release call, and dependents visited per cascade call: bound the time one script holds Redis. */
const BATCH = 200;
const CASCADE_BUDGET = 200;
/** Dead letters read per sweep call. */
const SWEEP_PAGE = 200;

/**
 * Moves flows on from the workers (issue 30). A node's completion is recorded in the flow and told to its
 * dependents before its task is acknowledged; its death after its burial. Each step is idempotent, and a
 * dependent leaves its parked state at most once (on its own type's slot, see `flow-park.lua`), so a crash
 * anywhere is repaired by doing it again: a completed node not yet acknowledged runs again (at least once,
 * as any task), and its repeat tells its dependents again, which changes nothing. No node starts twice.
 */
export class FlowProgress {
  /** Nodes finished since the last flush (see `flush`). */
  private pending: Settling[] = [];

  constructor(
    readonly store: FlowStore,
    private readonly maxResultBytes: number,
    readonly events: FlowEvents,
  ) {}

  /** Whether a task of `type` is a flow node these hooks serve (the route's delay type only moves tasks). */
  static isNode(type: string, id: string): boolean {
    return id.charCodeAt(0) === 38 && !type.startsWith('__route__.');
  }

  /** What the node's handler reads in `task.flow`. */
  async context(id: string): Promise<TaskFlow> {
    const { flowId, ref } = parseFlowNodeId(id)!;
    const results: Record<string, unknown> = {};
    const failed: Record<string, TaskErrorInfo> = {};
    for (const [dep, state, json] of await this.store.context(flowId, ref)) {
      if (state === 'c' && json !== '') setEntry(results, dep, JSON.parse(json));
      else if (state === 'x' && json !== '') setEntry(failed, dep, JSON.parse(json) as TaskErrorInfo);
    }
    return { id: flowId, ref, results, failed };
  }

  /** The result as the flow keeps it ('' for undefined). @throws FlowResultError: not JSON, or too large */
  encodeResult(result: unknown): string {
    if (result === undefined) return '';
    let json: string | undefined;
    try {
      json = JSON.stringify(result);
    } catch (error) {
      throw new FlowResultError(`not serialisable to JSON (${(error as Error).message})`);
    }
    if (json === undefined) return '';
    const bytes = Buffer.byteLength(json);
    if (bytes > this.maxResultBytes) throw new FlowResultError(`${bytes} bytes, more than flows.maxResultBytes (${this.maxResultBytes})`);
    return json;
  }

  /**
   * A node completed (before its ack): recorded, its dependents told, blocked ones freed. `json` from
   * `encodeResult`. The nodes finished in one tick go together: one call per flow, one per dependents' type.
   */
  completed(id: string, json: string): Promise<void> {
    return this.enqueue(id, 'c', json);
  }

  /** A node died (after its burial): recorded; under 'ignore' its dependents are told, else they are blocked. */
  dead(id: string, error: TaskErrorInfo): Promise<void> {
    return this.enqueue(id, 'x', JSON.stringify(error));
  }

  private enqueue(id: string, outcome: 'c' | 'x', json: string): Promise<void> {
    const { flowId, ref } = parseFlowNodeId(id)!;
    return new Promise((resolve, reject) => {
      this.pending.push({ flowId, ref, outcome, json, resolve, reject });
      if (this.pending.length === 1) this.schedule(() => void this.flush());
    });
  }

  /** When the nodes finished in this turn are settled: the next turn of the event loop (the testing module: a microtask). */
  protected schedule(flush: () => void): void {
    setImmediate(flush);
  }

  /** Settles what finished since the last flush: per flow, then tells the dependents per type, then cascades. */
  private async flush(): Promise<void> {
    const items = this.pending;
    this.pending = [];
    const settled: { item: Settling; reply: SettleReply }[] = [];
    await Promise.all(
      [...groupBy(items, (i) => i.flowId)].map(async ([flowId, list]) => {
        for (let i = 0; i < list.length; i += SETTLE_BATCH) {
          const chunk = list.slice(i, i + SETTLE_BATCH);
          try {
            const { ended, replies } = await this.store.settle(flowId, chunk);
            replies.forEach((reply, j) => reply.changed !== null && settled.push({ item: chunk[j], reply }));
            this.events.ended(flowId, ended);
          } catch (error) {
            for (const item of chunk) item.error = error;
          }
        }
      }),
    );
    const tells = new Map<string, { pair: [string, string, '0' | '1']; item: Settling }[]>();
    for (const { item, reply } of settled) {
      // NOTE: what a dependent's worker would read of this node (see flow-release-5.lua)
      const left = item.outcome === 'x' || item.json !== '' ? '1' : '0';
      for (let i = 0; i < reply.tell.length; i += 2) {
        const list = tells.get(reply.tell[i + 1]) ?? [];
        list.push({ pair: [flowNodeId(item.flowId, reply.tell[i]), item.ref, left], item });
        tells.set(reply.tell[i + 1], list);
      }
    }
    await Promise.all(
      [...tells].map(async ([type, list]) => {
        for (let i = 0; i < list.length; i += BATCH) {
          const chunk = list.slice(i, i + BATCH);
          await this.store.release(type, chunk.map((t) => t.pair)).catch((error: unknown) => chunk.forEach((t) => (t.item.error = error)));
        }
      }),
    );
    await Promise.all(
      settled.map(({ item, reply }) => this.cascade(item.flowId, reply.delta, reply.next).catch((error: unknown) => (item.error = error))),
    );
    for (const item of items) {
      if (item.error === undefined) item.resolve();
      else item.reject(item.error);
    }
  }

  /**
   * Repairs what a crash or an expired lease left out: every flow node of `type` buried and not swept yet (bury.lua notes them)
   * is recorded dead in its flow (a repeat for those whose worker did it; it carries an unfinished cascade on).
   */
  async sweepDead(type: string): Promise<void> {
    for (;;) {
      const nodes = await this.store.deadNodes(type, SWEEP_PAGE);
      for (const [id, diedAt, json] of nodes) {
        const error = json ? (JSON.parse(json) as TaskErrorInfo) : { name: 'Error', message: 'dead', attempts: 0, failedAt: diedAt };
        await this.dead(id, error);
      }
      await this.store.swept(type, nodes.map(([id]) => id));
      if (nodes.length < SWEEP_PAGE) return;
    }
  }

  /** Carries a cascade of blocking (or freeing) through the flow's record, at most CASCADE_BUDGET dependents per call. */
  private async cascade(flowId: string, delta: number, steps: CascadeStep[]): Promise<void> {
    const todo = [...steps];
    while (todo.length > 0) {
      const { ended, next } = await this.store.block(flowId, delta, todo.splice(0, CASCADE_BUDGET), CASCADE_BUDGET);
      todo.unshift(...next);
      this.events.ended(flowId, ended);
    }
  }
}
