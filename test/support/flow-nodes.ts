import type { Type } from '@nestjs/common';
import type { Cluster, Redis } from 'ioredis';
import { TaskFlowService, type FlowInfo, type Task, type TaskFlow, type TaskWorkerOptions } from 'nestjs-distributed-queue';
import { workerClass, type QueueApp } from './queue-app';
import { waitFor } from './wait';

/** One start of a flow node's handler: when it started and ended (this process's clock), what it read. */
export interface NodeRun {
  type: string;
  id: string;
  /** The node's ref (task.flow.ref), or the task id for a task outside any flow. */
  ref: string;
  start: number;
  end: number | null;
  flow: TaskFlow | undefined;
  priority?: number;
}

/**
 * A worker of `type` that records each start in `runs` and then runs `fn` (with the abort signal when `fn`
 * declares it). Polls every 100 ms unless `options` says otherwise.
 */
export function nodeWorker(
  runs: NodeRun[], type: string, options: TaskWorkerOptions = {},
  fn: (task: Task<any>, signal: AbortSignal) => unknown = () => undefined,
): Type<unknown> {
  const record = (t: Task<any>): NodeRun => {
    const run: NodeRun = { type, id: t.id, ref: t.flow?.ref ?? t.id, start: Date.now(), end: null, flow: t.flow };
    runs.push(run);
    return run;
  };
  const finish = async (run: NodeRun, result: () => unknown) => {
    try {
      return await result();
    } finally {
      run.end = Date.now();
    }
  };
  const merged = { pollIntervalMs: 100, ...options };
  if (fn.length >= 2) return workerClass(type, merged, (t: Task<any>, signal: AbortSignal) => finish(record(t), () => fn(t, signal)));
  return workerClass(type, merged, (t: Task<any>) => finish(record(t), () => (fn as (t: Task<any>) => unknown)(t)));
}

/** The runs of one ref. */
export const runsOf = (runs: NodeRun[], ref: string): NodeRun[] => runs.filter((r) => r.ref === ref);

/** The flows service of an app. */
export const flowsOf = (app: QueueApp): TaskFlowService => app.app.get(TaskFlowService);

/** Waits until getFlow reads the flow in a state `ok` accepts and returns it; it is read every `intervalMs`. */
export function flowWhere(flows: TaskFlowService, id: string, ok: (flow: FlowInfo) => boolean, timeoutMs = 15_000, intervalMs = 50): Promise<FlowInfo> {
  return waitFor(async () => {
    const flow = await flows.getFlow(id);
    return flow && ok(flow) ? flow : null;
  }, { timeoutMs, intervalMs, message: `flow ${id}: ${ok.toString()}` });
}

/** Waits until the flow ended (completed, failed or cancelled) and returns it (a large flow: a longer `intervalMs`). */
export function flowEnded(flows: TaskFlowService, id: string, timeoutMs = 15_000, intervalMs = 50): Promise<FlowInfo> {
  return flowWhere(flows, id, (f) => ['completed', 'failed', 'cancelled'].includes(f.state), timeoutMs, intervalMs);
}

/** A node of getFlow by ref. */
export function nodeOf(flow: FlowInfo, ref: string): FlowInfo['nodes'][number] {
  const node = flow.nodes.find((n) => n.ref === ref);
  if (!node) throw new Error(`no node "${ref}" in flow ${flow.id}`);
  return node;
}

/** Every key under `prefix` on every master, sorted. */
export async function keysUnder(redis: Redis | Cluster, prefix: string): Promise<string[]> {
  const nodes = 'nodes' in redis && typeof redis.nodes === 'function' ? (redis as Cluster).nodes('master') : [redis as Redis];
  const found = await Promise.all(nodes.map((n) => n.keys(`${prefix}*`)));
  return found.flat().sort();
}
