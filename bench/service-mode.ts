import { Redis } from 'ioredis';
import { serviceKeys } from 'nestjs-distributed-queue/service/service-registry';
import { spawnChild, type ChildHandle } from '../test/support/child';
import { startQueueApp, type QueueApp } from '../test/support/queue-app';
import { getFreePort } from '../test/support/redis-server';
import { until } from './stats';
import type { Start, System } from './systems';

const SECRET = 'bench-service-secret-0123456789';

/**
 * This library in service mode: a scheduler process (apps/scheduler) delivers over HTTP to two instances of
 * a client application (test/fixtures/service-client-app.ts), each in its own process; the producer submits
 * from this process. A start is the client handler's start, timed in the client.
 */
export function serviceMode(url: string, prefix: string): System {
  const children: ChildHandle[] = [];
  let producer: QueueApp | undefined;
  let forward: NodeJS.Timeout | undefined;
  const producerApp = async (): Promise<QueueApp> =>
    (producer ??= await startQueueApp({ connection: url, keyPrefix: prefix, workers: false, types: { bench: {} } }));
  const connection = JSON.stringify(url);
  return {
    name: 'this library (service mode, 2 instances)',
    async submit(items) {
      const app = await producerApp();
      for (let i = 0; i < items.length; i += 1000) {
        await app.submit.submitMany('bench', items.slice(i, i + 1000).map((item) => ({ payload: item.payload, delay: item.delay })));
      }
    },
    async work(concurrency, onStart) {
      const scheduler = spawnChild('apps/scheduler/src/main.ts', {
        DQ_CONNECTION: connection, DQ_PREFIX: prefix, DQ_SERVICE_SECRET: SECRET, SCHEDULER_API_TOKENS: 'bench-api-token-0123456789', PORT: String(await getFreePort()),
      });
      children.push(scheduler);
      for (const instance of ['bench-1', 'bench-2']) {
        children.push(spawnChild('test/fixtures/service-client-app.ts', {
          DQ_CONNECTION: connection, DQ_PREFIX: prefix, DQ_APP: 'bench-app', DQ_SECRET: SECRET, DQ_PORT: String(await getFreePort()),
          DQ_INSTANCE: instance, DQ_TYPES: 'bench', DQ_WORKER_OPTIONS: JSON.stringify({ concurrency }), DQ_HEARTBEAT_MS: '1000',
        }));
      }
      await Promise.all(children.map((c) => c.waitForMessage((m) => m.type === 'ready', 60_000)));
      const redis = new Redis(url);
      let live = 0;
      const poll = setInterval(() => void redis.zcard(serviceKeys(prefix).instances('bench-app')).then((n) => (live = n)), 50);
      const ready = await until(() => live === 2 && /delivering "bench"/.test(scheduler.output()), 10_000);
      clearInterval(poll);
      redis.disconnect();
      if (!ready) throw new Error(`the scheduler did not start delivering to both instances:\n${scheduler.output()}`);
      const read = children.map(() => 0);
      forward = setInterval(() => {
        children.forEach((child, i) => {
          for (; read[i] < child.messages.length; read[i]++) {
            const m = child.messages[read[i]];
            if (m.type === 'start') void onStart({ id: m.id, dueAt: m.dueAt, at: m.at } satisfies Start);
          }
        });
      }, 20);
    },
    async inspect() {
      const app = await producerApp();
      await app.inspect.getCounts('bench');
      return app.inspect.listTasks('bench', 'delayed', { limit: 100 });
    },
    async close() {
      clearInterval(forward);
      for (const child of children) child.kill('SIGTERM');
      await Promise.all(children.map((c) => c.exited));
      await producer?.close();
    },
  };
}
