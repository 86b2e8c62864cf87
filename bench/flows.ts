import { FlowProducer, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { TaskFlowService, type Task } from 'nestjs-distributed-queue';
import { startQueueApp, workerClass, type QueueApp } from '../test/support/queue-app';
import type { Row } from './report';
import { percentiles, until } from './stats';
import { costSince, markCost } from './cost';

const CONCURRENCY = 50;
const CHILDREN = 10;
const LATE = 'parent start after last child p50/p99/max ms';

/** A node's payload: its flow's index (and a child's own). */
interface Item {
  f: number;
  c?: number;
}

/** Epoch ms with sub-ms precision, the same clock in every handler of this process. */
export const now = (): number => performance.timeOrigin + performance.now();

/** What the handlers tell the benchmark: a child handler's end, a parent handler's start, a parent's completion. */
export interface Probe {
  childDone(f: number): void;
  parentStart(f: number): void;
  parentCompleted(): void;
}

/**
 * One system: `work` starts the workers of both types (concurrency 50 each) reporting to `probe`; `submit`
 * adds flow `f` (a parent waiting for 10 children).
 */
export interface FlowSystem {
  name: string;
  /** Starts the producer (submits can go before `work`). */
  open(): Promise<void>;
  work(probe: Probe): Promise<void>;
  submit(f: number): Promise<void>;
  close(): Promise<void>;
}

/** This library: `submitFlow` of 11 nodes (types 'parent' and 'child'); a parent completes when its flow ends. */
export function ours(url: string, prefix: string, concurrency = CONCURRENCY): FlowSystem {
  const apps: QueueApp[] = [];
  let flows: TaskFlowService | undefined;
  return {
    name: 'this library',
    async open() {
      const producer = await startQueueApp({ connection: url, keyPrefix: prefix, workers: false, types: { parent: {}, child: {} } });
      apps.push(producer);
      flows = producer.app.get(TaskFlowService);
    },
    async work(probe) {
      const Child = workerClass('child', { concurrency }, (task: Task<Item>) => void probe.childDone(task.payload.f));
      const Parent = workerClass('parent', { concurrency }, (task: Task<Item>) => void probe.parentStart(task.payload.f));
      const workers = await startQueueApp({ connection: url, keyPrefix: prefix }, [Child, Parent]);
      apps.push(workers);
      // NOTE: a flow's end is emitted by the instance whose call ended it: the parent's worker, or the
      // producer when every node had settled before its submitFlow marked the flow running.
      for (const app of apps) {
        app.app.get(TaskFlowService).onFlowEnded((e) => {
          if (e.state === 'completed') probe.parentCompleted();
        });
      }
    },
    async submit(f) {
      const children = Array.from({ length: CHILDREN }, (_, c) => ({ ref: `c${c}`, type: 'child', payload: { f, c } }));
      await flows!.submitFlow([...children, { ref: 'parent', type: 'parent', payload: { f }, dependsOn: children.map((c) => c.ref) }]);
    },
    async close() {
      await Promise.all(apps.map((a) => a.close()));
    },
  };
}

/**
 * BullMQ's FlowProducer: a parent in queue `<name>-parent` with 10 children in `<name>-child`, one `add` per
 * flow; a Worker per queue at concurrency 50; a parent completes at its worker's 'completed' event. Completed
 * jobs trimmed to the last 1000, as in the other workloads.
 */
export function bull(url: string, name: string): FlowSystem {
  const { hostname, port } = new URL(url);
  const connection = { host: hostname, port: Number(port) };
  const producer = new FlowProducer({ connection });
  const workers: Worker[] = [];
  const opts = { removeOnComplete: { count: 1000 } };
  return {
    name: 'bullmq (FlowProducer)',
    async open() {
      await producer.waitUntilReady();
    },
    async work(probe) {
      const child = new Worker(`${name}-child`, async (job: Job<Item>) => void probe.childDone(job.data.f), { connection, concurrency: CONCURRENCY });
      const parent = new Worker(`${name}-parent`, async (job: Job<Item>) => void probe.parentStart(job.data.f), { connection, concurrency: CONCURRENCY });
      parent.on('completed', () => probe.parentCompleted());
      workers.push(child, parent);
      await Promise.all(workers.map((w) => w.waitUntilReady()));
    },
    async submit(f) {
      const children = Array.from({ length: CHILDREN }, (_, c) => ({ name: 'child', queueName: `${name}-child`, data: { f, c }, opts }));
      await producer.add({ name: 'parent', queueName: `${name}-parent`, data: { f }, opts, children });
    },
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      await producer.close();
    },
  };
}

/**
 * Starts the workers, then submits `n` flows at once (every `submit` call in flight together) and waits
 * until every parent completed. Per flow, the parent's start lateness: its handler's start minus the end of
 * its last child's handler.
 */
export async function runOnce(redis: Redis, system: FlowSystem, n: number, beforeSubmit?: () => Promise<void>) {
  const lastChild = new Float64Array(n);
  const childCount = new Int32Array(n);
  const late: number[] = [];
  let early = 0;
  let parentsStarted = 0;
  let completed = 0;
  let lastCompleted = 0;
  await system.open();
  await system.work({
    childDone(f) {
      const t = now();
      if (t > lastChild[f]) lastChild[f] = t;
      childCount[f]++;
    },
    parentStart(f) {
      const t = now();
      parentsStarted++;
      // NOTE: a parent that started before all its children finished would break the promise: counted.
      if (childCount[f] < CHILDREN) early++;
      else late.push(t - lastChild[f]);
    },
    parentCompleted() {
      completed++;
      lastCompleted = now();
    },
  });
  await beforeSubmit?.();
  const mark = await markCost(redis);
  const t0 = now();
  await Promise.all(Array.from({ length: n }, (_, f) => system.submit(f)));
  const submitMs = now() - t0;
  const finished = await until(() => completed >= n, 120_000, 1);
  const cost = await costSince(redis, mark, n);
  if (!finished) throw new Error(`flows: ${system.name} completed ${completed} of ${n} flows in 120 s`);
  const children = childCount.reduce((a, b) => a + b, 0);
  return {
    submitMs,
    ms: lastCompleted - t0,
    late: percentiles(late),
    early,
    duplicated: parentsStarted - n + Math.max(0, children - n * CHILDREN),
    cmds: cost.calls / n,
    nodeCpu: cost.nodeCpuS,
    redisCpu: cost.redisCpuS,
    cost,
  };
}

/**
 * 15. Flows (issue 30): `n` flows of a parent waiting for 10 children, no-op handlers, the workers of both
 * types at concurrency 50 in this process. The flows are submitted at once once the workers run; throughput
 * is flows from the first submit to the last parent's completion. Lateness: a parent handler's start minus
 * its last child handler's end (one clock). A pass of 100 flows on each system first, not reported; then
 * the systems alternate, once each (quick) or three times each (full), and the median run by flows/s of each
 * is shown with every run's figures.
 */
export async function flows(url: string, quick: boolean, n = 1000, warmUp = 100): Promise<Row[]> {
  const redis = new Redis(url);
  const makers = [() => ours(url, `flow${Date.now()}`), () => bull(url, `flow${Date.now()}`)];
  const workload = `15. flows: ${n} × (1 parent + ${CHILDREN} children), concurrency ${CONCURRENCY}`;
  const runs = new Map<string, Row[]>();
  try {
    const passes: [number, number][] = [[warmUp, 1], [n, quick ? 1 : 3]];
    for (const [size, rounds] of passes) {
      for (let round = 0; round < rounds; round++) {
        for (const make of makers) {
          await redis.flushall();
          const system = make();
          try {
            const r = await runOnce(redis, system, size);
            if (size !== n) continue;
            const rate = n / (r.ms / 1000);
            const row: Row = {
              workload,
              system: system.name,
              figures: {
                'submit flows/s': Math.round(n / (r.submitMs / 1000)),
                'flows/s': Math.round(rate),
                [LATE]: `${r.late.p50}/${r.late.p99}/${r.late.max}`,
                'early parents': r.early,
                duplicated: r.duplicated,
                'cmds/flow': r.cmds.toFixed(1),
                'node CPU s': r.nodeCpu.toFixed(1),
                'redis CPU s': r.redisCpu.toFixed(1),
              },
              key: { name: 'flows/s', value: rate },
              cost: r.cost,
            };
            runs.set(system.name, [...(runs.get(system.name) ?? []), row]);
          } finally {
            await system.close();
          }
        }
      }
    }
    const rows = [...runs.values()].map(medianRun);
    if (rows.length === 2) rows[0].figures['p99 vs BullMQ'] = `${(p99Of(rows[1]) / p99Of(rows[0])).toFixed(2)}×`;
    return rows;
  } finally {
    redis.disconnect();
  }
}

/** A row's parent start lateness p99 (ms). */
const p99Of = (row: Row): number => Number(String(row.figures[LATE]).split('/')[1]);

/** The median run by flows/s, with every run's flows/s and p99 beside it. */
function medianRun(each: Row[]): Row {
  const sorted = [...each].sort((a, b) => a.key!.value - b.key!.value);
  const row = sorted[Math.floor(sorted.length / 2)];
  if (each.length > 1) {
    row.figures['flows/s of each run'] = each.map((r) => r.figures['flows/s']).join(' / ');
    row.figures['p99 of each run'] = each.map((r) => p99Of(r)).join(' / ');
  }
  return row;
}
