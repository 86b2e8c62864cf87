import { Queue, Worker, type Job } from 'bullmq';
import { TaskHistoryService, type Task } from 'nestjs-distributed-queue';
import { startQueueApp, workerClass, type QueueApp } from '../test/support/queue-app';
import { dropBenchSchema, OBSERVED, observabilityOptions, withHistory, type Observability } from './observability';

/** A task start as a benchmark sees it: when it started and when it was due (epoch ms). */
export interface Start {
  id: string;
  dueAt: number;
  at: number;
}

/** The same operations on both systems. */
export interface System {
  name: string;
  /** Adds tasks (delay ms each) as fast as the system allows; resolves when all are stored. */
  submit(items: { payload: unknown; delay: number }[]): Promise<void>;
  /** Starts a worker at `concurrency`; `onStart` runs at each handler start. */
  work(concurrency: number, onStart: (start: Start) => void | Promise<void>): Promise<void>;
  /** Counts by state, then the first page (100) of delayed tasks: what a dashboard asks for. */
  inspect(): Promise<unknown>;
  /** With the task history on: resolves once every history row so far is written (else absent). */
  flushHistory?(): Promise<void>;
  close(): Promise<void>;
}

/**
 * One system for a workload with payloads of its own (`T`): `submit` stores the items (one call), `work` starts
 * one worker calling `onStart` with each task's payload at its handler's start.
 */
export interface ItemSystem<T> {
  name: string;
  submit(items: T[]): Promise<void>;
  work(onStart: (item: T) => void): Promise<void>;
  close(): Promise<void>;
}

const CHUNK = 1000;

/** Calls `fn` with the items in chunks of 1,000, `parallel` calls at a time. */
export async function inChunks<T>(items: T[], parallel: number, fn: (chunk: T[]) => Promise<unknown>): Promise<void> {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) chunks.push(items.slice(i, i + CHUNK));
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < chunks.length) await fn(chunks[next++]);
  }));
}

/** This library, through its Nest module as an application uses it. */
export function ours(url: string, prefix: string, observability: Observability = 'default'): System {
  const apps: QueueApp[] = [];
  let producer: QueueApp | undefined;
  const observed = OBSERVED[observability];
  /** The one producer app, started at first use (closed with the rest). */
  const producerApp = async (options: object = {}): Promise<QueueApp> => {
    if (!producer) {
      producer = await startQueueApp({ connection: url, keyPrefix: prefix, workers: false, types: { bench: {} }, ...options });
      apps.push(producer);
    }
    return producer;
  };
  return {
    name: `this library${observed.label}`,
    async submit(items) {
      // NOTE: with the history on, the producer runs a writer too: submits are logged while one runs.
      const own = withHistory(observability) ? observabilityOptions('history') : {};
      const app = await producerApp(own);
      await inChunks(items, 4, (chunk) => app.submit.submitMany('bench', chunk.map((i) => ({ payload: i.payload, delay: i.delay }))));
    },
    async work(concurrency, onStart) {
      const results = observability === 'everything';
      const W = workerClass('bench', { concurrency }, (task: Task) => {
        const at = Date.now();
        onStart({ id: task.id, dueAt: task.dueAt, at });
        // NOTE: a small result, kept with the finished task (everything on)
        return results ? { at } : undefined;
      });
      apps.push(await startQueueApp({ connection: url, keyPrefix: prefix, ...observabilityOptions(observability) }, [W, ...(observed.providers as never[])]));
    },
    async inspect() {
      const app = await producerApp();
      await app.inspect.getCounts('bench');
      return app.inspect.listTasks('bench', 'delayed', { limit: 100 });
    },
    ...(withHistory(observability) && {
      async flushHistory() {
        await Promise.all(apps.map((a) => a.app.get(TaskHistoryService, { strict: false }).flush({ timeoutMs: 120_000 })));
      },
    }),
    async close() {
      await Promise.all(apps.map((a) => a.close()));
      if (withHistory(observability)) await dropBenchSchema();
    },
  };
}

/** BullMQ's connection options for a redis:// url, and a queue `name` on it. */
export function bullQueue(url: string, name: string): { connection: { host: string; port: number }; queue: Queue } {
  const { hostname, port } = new URL(url);
  const connection = { host: hostname, port: Number(port) };
  return { connection, queue: new Queue(name, { connection }) };
}

/** BullMQ with its defaults, completed jobs trimmed to the last 1000 like this library's keepDone. */
export function bullmq(url: string, name: string): System {
  const { connection, queue } = bullQueue(url, name);
  let worker: Worker | undefined;
  return {
    name: 'bullmq',
    async submit(items) {
      await inChunks(items, 4, (chunk) =>
        queue.addBulk(chunk.map((i) => ({ name: 'bench', data: i.payload, opts: { delay: i.delay || undefined, removeOnComplete: { count: 1000 } } }))),
      );
    },
    async work(concurrency, onStart) {
      worker = new Worker(
        name,
        async (job: Job) => onStart({ id: String(job.id), dueAt: job.timestamp + (job.opts.delay ?? 0), at: Date.now() }),
        { connection, concurrency },
      );
      await worker.waitUntilReady();
    },
    async inspect() {
      await queue.getJobCounts();
      return queue.getJobs(['delayed'], 0, 99);
    },
    async close() {
      await worker?.close();
      await queue.close();
    },
  };
}
