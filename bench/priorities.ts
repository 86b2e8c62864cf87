import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Task } from 'nestjs-distributed-queue';
import { startQueueApp, workerClass, type QueueApp } from '../test/support/queue-app';
import type { Row } from './report';
import { until } from './stats';
import { costSince, markCost } from './cost';
import { bullQueue, type ItemSystem } from './systems';

const LEVELS = 10;
const CONCURRENCY = 50;
const BATCH = 1000;

/** A task's payload (about 100 bytes): its submission index and priority. */
interface Item {
  i: number;
  p: number;
  text: string;
}

/** Priorities 1..10, interleaved: submission i has priority 1 + i mod 10. */
const items = (n: number): Item[] => Array.from({ length: n }, (_, i) => ({ i, p: 1 + (i % LEVELS), text: 'x'.repeat(80) }));

/** One system: `submit` stores every task; `work` starts one worker calling `onStart` at each handler start. */
type PrioritySystem = ItemSystem<Item>;

function ours(url: string, prefix: string): PrioritySystem {
  const apps: QueueApp[] = [];
  return {
    name: 'this library',
    async submit(all) {
      const producer = await startQueueApp({ connection: url, keyPrefix: prefix, workers: false, types: { prio: {} } });
      apps.push(producer);
      for (let i = 0; i < all.length; i += BATCH) {
        await producer.submit.submitMany('prio', all.slice(i, i + BATCH).map((item) => ({ payload: item, priority: item.p })));
      }
    },
    async work(onStart) {
      const W = workerClass('prio', { concurrency: CONCURRENCY }, (task: Task<Item>) => void onStart(task.payload));
      apps.push(await startQueueApp({ connection: url, keyPrefix: prefix }, [W]));
    },
    async close() {
      await Promise.all(apps.map((a) => a.close()));
    },
  };
}

/** BullMQ's prioritized queue (priority 1 the highest; FIFO within one), completed jobs trimmed to 1000. */
function bull(url: string, name: string): PrioritySystem {
  const { connection, queue } = bullQueue(url, name);
  let worker: Worker | undefined;
  return {
    name: 'bullmq',
    async submit(all) {
      for (let i = 0; i < all.length; i += BATCH) {
        await queue.addBulk(all.slice(i, i + BATCH).map((item) => ({ name: 'prio', data: item, opts: { priority: item.p, removeOnComplete: { count: 1000 } } })));
      }
    },
    async work(onStart) {
      worker = new Worker(name, async (job: Job<Item>) => void onStart(job.data), { connection, concurrency: CONCURRENCY });
      await worker.waitUntilReady();
    },
    async close() {
      await worker?.close();
      await queue.close();
    },
  };
}

/**
 * Starts in order, each with a key (a priority, a submission index): start i is out of order when a start of
 * a smaller key comes more than `slack` positions after it. `count`: such starts i; `most`: the largest
 * distance from a start to a later one of a smaller key (the slack that would make `count` 0).
 */
export function outOfOrder(positions: number[], keys: number[], slack: number): { count: number; most: number } {
  let count = 0;
  // Backward: the smallest key among the starts more than `slack` positions after start i.
  let least = Infinity;
  let k = positions.length;
  for (let i = positions.length - 1; i >= 0; i--) {
    while (k > 0 && positions[k - 1] > positions[i] + slack) least = Math.min(least, keys[--k]);
    if (least < keys[i]) count++;
  }
  // Forward: for start j, the first earlier start of a larger key (where the running maximum first exceeds it).
  let most = 0;
  const recordAt: number[] = [];
  const recordKey: number[] = [];
  for (let j = 0; j < positions.length; j++) {
    if (recordKey.length > 0 && recordKey[recordKey.length - 1] > keys[j]) {
      let lo = 0;
      let hi = recordKey.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (recordKey[mid] > keys[j]) hi = mid;
        else lo = mid + 1;
      }
      most = Math.max(most, positions[j] - recordAt[lo]);
    }
    if (recordKey.length === 0 || keys[j] > recordKey[recordKey.length - 1]) {
      recordAt.push(positions[j]);
      recordKey.push(keys[j]);
    }
  }
  return { count, most };
}

/** Inversions across priorities and FIFO violations within each, `slack` starts allowed. */
export function orderOf(starts: Item[], slack: number) {
  const inversions = outOfOrder(starts.map((_, at) => at), starts.map((s) => s.p), slack);
  const fifo = { count: 0, most: 0 };
  const byLevel = new Map<number, { at: number[]; i: number[] }>();
  starts.forEach((s, at) => {
    const level = byLevel.get(s.p) ?? { at: [], i: [] };
    level.at.push(at);
    level.i.push(s.i);
    byLevel.set(s.p, level);
  });
  for (const level of byLevel.values()) {
    const r = outOfOrder(level.at, level.i, slack);
    fifo.count += r.count;
    fifo.most = Math.max(fifo.most, r.most);
  }
  return { inversions, fifo };
}

/** Submits `n` tasks over 10 priorities, then runs them with one worker at concurrency 50. */
async function runOnce(redis: Redis, system: PrioritySystem, n: number) {
  const all = items(n);
  const t0 = performance.now();
  await system.submit(all);
  const submitMs = performance.now() - t0;
  const starts: Item[] = [];
  const mark = await markCost(redis);
  let first = 0;
  const w0 = performance.now();
  await system.work((item) => {
    if (starts.push(item) === 1) first = performance.now();
  });
  const finished = await until(() => starts.length >= n, 120_000, 1);
  const w1 = performance.now();
  const cost = await costSince(redis, mark, n);
  if (!finished) throw new Error(`prioritized: ${system.name} started ${starts.length} of ${n} in 120 s`);
  const distinct = new Set(starts.map((s) => s.i)).size;
  return {
    submitMs,
    ms: w1 - w0,
    fromFirstMs: w1 - first,
    starts,
    missing: n - distinct,
    duplicated: starts.length - distinct,
    cmds: cost.calls / n,
    nodeCpu: cost.nodeCpuS,
    redisCpu: cost.redisCpuS,
    cost,
  };
}

/**
 * 13. Prioritized: `n` tasks over priorities 1..10 (interleaved, submitted in batches of 1,000), then one worker
 * at concurrency 50 with an empty handler, timed from the worker's start to the last handler start. Order:
 * an inversion is a start of priority p followed more than 50 (the concurrency) starts later by a start of a
 * more urgent priority; a FIFO violation a start followed more than 50 starts later by an earlier-submitted
 * task of its own priority. "slack needed" is the distance that would make each count 0.
 */
export async function prioritized(url: string, quick: boolean, n = quick ? 10_000 : 50_000, warmUp = 2000): Promise<Row[]> {
  const redis = new Redis(url);
  const rows: Row[] = [];
  const systems = [
    () => ours(url, `prio${Date.now()}`),
    () => bull(url, `prio${Date.now()}`),
  ];
  try {
    // NOTE: a pass of 2,000 on each first: the first system to run would otherwise pay the JIT warm-up of
    // what both share (ioredis, sockets).
    for (const size of [warmUp, n]) {
      for (const make of systems) {
        await redis.flushall();
        const system = make();
        try {
          const r = await runOnce(redis, system, size);
          if (size !== n) continue;
          const order = orderOf(r.starts, CONCURRENCY);
          const rate = n / (r.ms / 1000);
          rows.push({
            workload: `13. prioritized ${n} over ${LEVELS} priorities, concurrency ${CONCURRENCY}`,
            system: system.name,
            figures: {
              'submit/s': Math.round(n / (r.submitMs / 1000)),
              'tasks/s': Math.round(rate),
              'tasks/s from first start': Math.round(n / (r.fromFirstMs / 1000)),
              'inversions (> 50 later)': order.inversions.count,
              'slack needed': order.inversions.most,
              'FIFO violations (> 50 later)': order.fifo.count,
              'FIFO slack needed': order.fifo.most,
              'cmds/task': r.cmds.toFixed(1),
              'node CPU s': r.nodeCpu.toFixed(1),
              'redis CPU s': r.redisCpu.toFixed(1),
              missing: r.missing,
              duplicated: r.duplicated,
            },
            key: { name: 'tasks/s', value: rate },
            cost: r.cost,
          });
        } finally {
          await system.close();
        }
      }
    }
    return rows;
  } finally {
    redis.disconnect();
  }
}
