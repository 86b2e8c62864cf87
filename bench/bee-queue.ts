import BeeQueue from 'bee-queue';
import { inChunks, type System } from './systems';

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
      await inChunks(items, 4, async (chunk) => {
        const failed = await producer.saveAll(chunk.map((item) => {
          const job = producer.createJob(item.payload);
          return item.delay > 0 ? job.delayUntil(now + item.delay) : job;
        }));
        if (failed.size > 0) throw [...failed.values()][0];
      });
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
