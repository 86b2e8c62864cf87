import { Queue, Worker } from 'bullmq';
import type { Task } from 'nestjs-distributed-queue';
import { startQueueApp, workerClass, type QueueApp } from '../test/support/queue-app';
import type { Row } from './report';
import { until } from './stats';
import { busiestWindow } from '../test/support/sliding-window';

/** Three worker applications (or BullMQ workers) with their own connections: a fleet of three. */
const FLEET = 3;

/** Runs `n` ready tasks through a fleet of three workers built by `work`; start times and most at once. */
async function runFleet(
  n: number, holdMs: number,
  start: (onStart: () => void, onEnd: () => void) => Promise<() => Promise<void>>,
  submit: (n: number) => Promise<void>,
): Promise<{ starts: number[]; most: number; ms: number }> {
  const starts: number[] = [];
  let running = 0;
  let most = 0;
  let done = 0;
  const onStart = (): void => {
    starts.push(Date.now());
    most = Math.max(most, ++running);
  };
  const onEnd = (): void => {
    running--;
    done++;
  };
  const stops: (() => Promise<void>)[] = [];
  try {
    for (let i = 0; i < FLEET; i++) stops.push(await start(onStart, onEnd));
    const t0 = Date.now();
    await submit(n);
    await until(() => done >= n, 120_000 + n * holdMs);
    return { starts, most, ms: Date.now() - t0 };
  } finally {
    await Promise.all(stops.map((stop) => stop()));
  }
}

const hold = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** This library's fleet: `options` on every worker. */
function ours(url: string, prefix: string, options: object, holdMs: number) {
  let producer: QueueApp | undefined;
  return {
    start: async (onStart: () => void, onEnd: () => void) => {
      const W = workerClass('lim', { concurrency: 50, ...options }, async (_t: Task) => {
        onStart();
        if (holdMs > 0) await hold(holdMs);
        onEnd();
      });
      const app = await startQueueApp({ connection: url, keyPrefix: prefix }, [W]);
      return () => app.close();
    },
    submit: async (n: number) => {
      producer = await startQueueApp({ connection: url, keyPrefix: prefix, workers: false, types: { lim: {} } });
      for (let i = 0; i < n; i += 1000) await producer.submit.submitMany('lim', Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ payload: i + j })));
    },
    close: async () => producer?.close(),
  };
}

/** BullMQ's fleet: `limiter` or the queue's global concurrency. */
function bull(url: string, name: string, opts: { limiter?: { max: number; duration: number }; globalConcurrency?: number }, holdMs: number) {
  const { hostname, port } = new URL(url);
  const connection = { host: hostname, port: Number(port) };
  const queue = new Queue(name, { connection });
  return {
    start: async (onStart: () => void, onEnd: () => void) => {
      if (opts.globalConcurrency) await queue.setGlobalConcurrency(opts.globalConcurrency);
      const worker = new Worker(name, async () => {
        onStart();
        if (holdMs > 0) await hold(holdMs);
        onEnd();
      }, { connection, concurrency: 50, limiter: opts.limiter });
      await worker.waitUntilReady();
      return () => worker.close();
    },
    submit: async (n: number) => {
      for (let i = 0; i < n; i += 1000) {
        await queue.addBulk(Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ name: 'lim', data: i + j, opts: { removeOnComplete: true } })));
      }
    },
    close: async () => queue.close(),
  };
}

/**
 * 11. Rate-limited: a limit of `max` per second over a fleet of three, `seconds` of work: the achieved rate
 * and the busiest sliding 1 s window (this library: GCRA, at most max + burst; BullMQ: a fixed window).
 * 12. Fleet-wide concurrency 10 over three workers with 20 ms handlers: the most running at once, and the
 * throughput against 10 / 20 ms.
 */
export async function limits(url: string, quick: boolean): Promise<Row[]> {
  const max = 1000;
  const seconds = quick ? 5 : 20;
  const rows: Row[] = [];
  const rateSystems = [
    ['this library', () => ours(url, `lim${Date.now()}`, { rateLimit: { max, perMs: 1000 } }, 0)],
    ['bullmq', () => bull(url, `lim${Date.now()}`, { limiter: { max, duration: 1000 } }, 0)],
  ] as const;
  for (const [name, make] of rateSystems) {
    const system = make();
    try {
      const { starts, ms } = await runFleet(max * seconds, 0, system.start, system.submit);
      const span = (Math.max(...starts) - Math.min(...starts)) / 1000;
      rows.push({
        workload: `11. rate-limited, ${max}/s over ${FLEET} workers, ${max * seconds} tasks`,
        system: name,
        figures: { 'achieved/s': Math.round(starts.length / span), 'vs limit': `${((100 * starts.length) / span / max).toFixed(1)} %`, 'busiest 1 s window': busiestWindow(starts, 1000), 's': (ms / 1000).toFixed(1) },
        key: { name: 'busiest 1 s window', value: busiestWindow(starts, 1000), lowerIsBetter: true },
      });
    } finally {
      await system.close();
    }
  }
  const n = quick ? 2000 : 10_000;
  const concurrencySystems = [
    ['this library', () => ours(url, `gc${Date.now()}`, { globalConcurrency: 10 }, 20)],
    ['bullmq', () => bull(url, `gc${Date.now()}`, { globalConcurrency: 10 }, 20)],
  ] as const;
  for (const [name, make] of concurrencySystems) {
    const system = make();
    try {
      const { most, ms } = await runFleet(n, 20, system.start, system.submit);
      const rate = n / (ms / 1000);
      rows.push({
        workload: `12. fleet-wide concurrency 10 over ${FLEET} workers, 20 ms handlers, ${n} tasks`,
        system: name,
        figures: { 'most at once': most, 'tasks/s': Math.round(rate), 'vs 10 / 20 ms': `${Math.round((100 * rate) / 500)} %` },
        key: { name: 'tasks/s', value: rate },
      });
    } finally {
      await system.close();
    }
  }
  return rows;
}
