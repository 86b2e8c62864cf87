import BeeQueue from 'bee-queue';
import type { System } from './systems';

const CHUNK = 1000;

/**
 * bee-queue (1.x) with the settings its README gives for speed: no job objects kept in the process
 * (`storeJobs: false`), no events sent or read, finished jobs removed (`removeOnSuccess`, as this library
 * keeps only the last 1000 ids), delayed jobs activated by the worker's queue (its default debounce, 1 s).
 * The producer and the worker are separate queue objects (connections), as in the other systems.
 */
export function beeQueue(url: string, name: string): System {
  const { hostname, port } = new URL(url);
  const redis = { host: hostname, port: Number(port) };
  const common = { redis, prefix: 'bq', getEvents: false, sendEvents: false, storeJobs: false, removeOnSuccess: true };
  const producer = new BeeQueue(name, { ...common, isWorker: false });
  let worker: BeeQueue | undefined;
  return {
    name: 'bee-queue',
    async submit(items) {
      await producer.ready();
      const now = Date.now();
      const chunks: (typeof items)[] = [];
      for (let i = 0; i < items.length; i += CHUNK) chunks.push(items.slice(i, i + CHUNK));
      let next = 0;
      await Promise.all(Array.from({ length: 4 }, async () => {
        while (next < chunks.length) {
          const jobs = chunks[next++].map((item) => {
            const job = producer.createJob(item.payload);
            return item.delay > 0 ? job.delayUntil(now + item.delay) : job;
          });
          const failed = await producer.saveAll(jobs);
          if (failed.size > 0) throw [...failed.values()][0];
        }
      }));
    },
    async work(concurrency, onStart) {
      worker = new BeeQueue(name, { ...common, isWorker: true, activateDelayedJobs: true });
      await worker.ready();
      worker.process(concurrency, async (job) => {
        const options = job.options as { timestamp: number; delay?: number };
        await onStart({ id: String(job.id), dueAt: options.delay ?? options.timestamp, at: Date.now() });
      });
    },
    async inspect() {
      await producer.checkHealth();
      return producer.getJobs('delayed', { start: 0, end: 99 });
    },
    async close() {
      await worker?.close();
      await producer.close();
    },
  };
}
