import { QueueEvents, Worker, type Job } from 'bullmq';
import type { ActiveTask } from 'nestjs-distributed-queue';
import { startQueueApp, workerClass, type QueueApp } from '../test/support/queue-app';
import type { Row } from './report';
import { percentiles } from './stats';
import { bullQueue } from './systems';

const CONCURRENCY = 50;
const BATCH = 1000;
/** Round trips before the measured ones (see round-trip.ts: a fresh process compiles its path first). */
const WARM_UP = 1000;

/** One system of workload 16. */
interface ResultSystem {
  name: string;
  /**
   * Stores `n` tasks whose handler returns `{ i, total }` when `results`, else nothing, and reports progress
   * once (`progress`, with results); resolves when all ran.
   */
  throughput(n: number, results: boolean, progress?: boolean): Promise<number>;
  /** One task at a time: submit, wait for its result; the round trip's times (ms). */
  awaited(n: number): Promise<number[]>;
  close(): Promise<void>;
}

function ours(url: string, prefix: string): ResultSystem {
  const apps: QueueApp[] = [];
  let done = 0;
  const start = async (): Promise<QueueApp> => {
    const W = workerClass('res', { concurrency: CONCURRENCY }, (task: ActiveTask<{ i: number; r: boolean; p?: boolean }>) => {
      done++;
      if (task.payload.p) task.progress(50);
      return task.payload.r ? { i: task.payload.i, total: task.payload.i * 3 } : undefined;
    });
    const app = await startQueueApp({ connection: url, keyPrefix: prefix }, [W]);
    apps.push(app);
    return app;
  };
  let app: QueueApp | undefined;
  return {
    name: 'this library',
    async throughput(n, results, progress) {
      app ??= await start();
      done = 0;
      const t0 = performance.now();
      for (let i = 0; i < n; i += BATCH) {
        await app.submit.submitMany('res', Array.from({ length: Math.min(BATCH, n - i) }, (_, j) => ({ payload: { i: i + j, r: results, p: progress } })));
      }
      while (done < n) await new Promise((resolve) => setTimeout(resolve, 5));
      return n / ((performance.now() - t0) / 1000);
    },
    async awaited(n) {
      app ??= await start();
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        await app.submit.submitAndWait('res', { i, r: true });
        times.push(performance.now() - t0);
      }
      return times;
    },
    async close() {
      await Promise.all(apps.map((a) => a.close()));
    },
  };
}

/** BullMQ: its return value kept on the job (completed jobs trimmed to 1000), `job.waitUntilFinished(queueEvents)`. */
function bull(url: string, name: string): ResultSystem {
  const { connection, queue } = bullQueue(url, name);
  let worker: Worker | undefined;
  let events: QueueEvents | undefined;
  let done = 0;
  const start = async (): Promise<void> => {
    if (worker) return;
    worker = new Worker(name, async (job: Job<{ i: number; r: boolean; p?: boolean }>) => {
      done++;
      if (job.data.p) await job.updateProgress(50);
      return job.data.r ? { i: job.data.i, total: job.data.i * 3 } : undefined;
    }, { connection, concurrency: CONCURRENCY });
    events = new QueueEvents(name, { connection });
    await Promise.all([worker.waitUntilReady(), events.waitUntilReady()]);
  };
  return {
    name: 'bullmq',
    async throughput(n, results, progress) {
      await start();
      done = 0;
      const t0 = performance.now();
      for (let i = 0; i < n; i += BATCH) {
        await queue.addBulk(Array.from({ length: Math.min(BATCH, n - i) }, (_, j) => ({ name: 'res', data: { i: i + j, r: results, p: progress }, opts: { removeOnComplete: { count: 1000 } } })));
      }
      while (done < n) await new Promise((resolve) => setTimeout(resolve, 5));
      return n / ((performance.now() - t0) / 1000);
    },
    async awaited(n) {
      await start();
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        const job = await queue.add('res', { i, r: true }, { removeOnComplete: { count: 1000 } });
        await job.waitUntilFinished(events!);
        times.push(performance.now() - t0);
      }
      return times;
    },
    async close() {
      await worker?.close();
      await events?.close();
      await queue.close();
    },
  };
}

/**
 * 16. Results and awaiting: (a) the immediate workload (submitted in batches, 50 handlers) with every handler
 * returning a small result, kept (this library: with its finished task while among keepDone; BullMQ: on the
 * job, trimmed to 1000), and with results and one progress report per task (this library: `task.progress`,
 * coalesced; BullMQ: `await job.updateProgress`), beside the same without either; (b) `submitAndWait` one task at a time (submit to
 * its result back in the caller) beside BullMQ's `add` + `job.waitUntilFinished(queueEvents)`.
 * Targets (issue 31): (a) with results (and progress) at least 80 % of without; (b) p99 at most 2 ms.
 */
export async function results(url: string, quick: boolean): Promise<Row[]> {
  const n = quick ? 20_000 : 100_000;
  const waits = quick ? 500 : 2000;
  const warmUp = quick ? 200 : WARM_UP;
  const rows: Row[] = [];
  for (const make of [ours, bull]) {
    const system = make(url, `res${Date.now()}`);
    try {
      const without = await system.throughput(n, false);
      const withResults = await system.throughput(n, true);
      const withProgress = await system.throughput(n, true, true);
      const times = await system.awaited(warmUp + waits);
      const p = percentiles(times.slice(warmUp));
      rows.push({
        workload: `16a. results kept, ${n} immediate tasks`,
        system: system.name,
        figures: {
          'tasks/s without results': Math.round(without), 'tasks/s with results': Math.round(withResults), 'with / without': `${Math.round((withResults / without) * 100)} %`,
          'tasks/s with results and progress': Math.round(withProgress), 'with both / without': `${Math.round((withProgress / without) * 100)} %`,
        },
        key: { name: 'tasks/s with results', value: withResults },
      });
      rows.push({
        workload: `16b. submit and wait for the result, ${waits} one at a time`,
        system: system.name,
        figures: { 'submit→result p50/p99/max ms': `${p.p50}/${p.p99}/${p.max}` },
        key: { name: 'p99 submit→result', value: p.p99, lowerIsBetter: true },
      });
    } finally {
      await system.close();
    }
  }
  return rows;
}
