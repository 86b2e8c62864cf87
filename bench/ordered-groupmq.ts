import { Queue as GroupQueue, Worker as GroupWorker } from 'groupmq';
import { Redis } from 'ioredis';
import { OrderLog, submitRounds } from './order-log';
import type { Row } from './report';
import { until } from './stats';

/**
 * Workload 3 on groupmq, the per-key FIFO peer: each key a group (groupmq runs one job of a group at a time,
 * in order), the same rounds of submits (its producer's `autoBatch` sends a tick's adds as one batch), one
 * worker at concurrency 50 in this process with the same handler as BullMQ's (a 1 ms wait on even tasks),
 * `reserveScanLimit` 256 as in the groups workload (its default, 20, leaves slots idle with many groups).
 */
export async function groupmqOrdered(url: string, namespace: string, keys: number, perKey: number): Promise<Row> {
  const total = keys * perKey;
  const clients = [new Redis(url, { maxRetriesPerRequest: null }), new Redis(url, { maxRetriesPerRequest: null })];
  const producer = new GroupQueue<{ key: string; n: number }>({ redis: clients[0], namespace, autoBatch: { size: 1000, maxWaitMs: 0 } });
  const queue = new GroupQueue<{ key: string; n: number }>({ redis: clients[1], namespace, reserveScanLimit: 256 });
  const log = new OrderLog();
  const worker = new GroupWorker<{ key: string; n: number }>({
    queue,
    concurrency: 50,
    handler: async (job) => {
      log.record(job.data.key, job.data.n, performance.now());
      if (job.data.n % 2 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    },
  });
  try {
    const t0 = performance.now();
    await submitRounds((n, names) => Promise.all(names.map((key) => producer.add({ groupId: key, data: { key, n } }))), keys, perKey);
    await until(() => log.distinct() >= total, 600_000, 10);
    const seconds = (performance.now() - t0) / 1000;
    return {
      workload: `3. ordered ${keys} keys × ${perKey}`,
      system: 'groupmq',
      figures: { 'tasks/s': Math.round(total / seconds), 'order violations': log.violations, missing: total - log.distinct() },
      key: { name: 'tasks/s', value: total / seconds },
    };
  } finally {
    await worker.close(1000);
    clients.forEach((c) => c.disconnect());
  }
}
