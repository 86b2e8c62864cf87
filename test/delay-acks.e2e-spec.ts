import { Redis } from 'ioredis';
import { useStartedApps, workerClass } from './support/queue-app';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { commandCalls } from './support/redis-stats';
import { uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

/** Script calls the server ran so far (EVALSHA and EVAL). */
const scriptCalls = (admin: Redis) => commandCalls(admin, 'evalsha', 'eval');

describe('acks of a delay worker at low load (a server of their own, to count its calls)', () => {
  let server: RedisServerHandle;
  let admin: Redis;
  beforeAll(async () => {
    server = await startRedisServer({ extraArgs: ['--save', ''] });
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    admin.disconnect();
    await server.remove();
  });
  const start = useStartedApps();

  it("at low load a finished task's ack goes out at once, one call at most per ack; the last one too", async () => {
    const prefix = uniquePrefix('low-load-acks');
    let started: (() => void) | undefined;
    const W = workerClass('la', { concurrency: 10 }, () => started?.());
    const connection = server.url;
    const producer = await start({ connection, keyPrefix: prefix, workers: false, types: { la: {} }, events: { stream: false } });
    await start({ connection, keyPrefix: prefix, events: { stream: false } }, [W]);
    // One task at a time, the next submitted as soon as the last one started.
    const n = 100;
    await new Promise<void>((resolve) => {
      started = resolve;
      void producer.submit.submit('la', { i: -1 });
    });
    const before = await scriptCalls(admin);
    for (let i = 0; i < n; i++) {
      await new Promise<void>((resolve, reject) => {
        started = resolve;
        producer.submit.submit('la', { i }).catch(reject);
      });
    }
    // A submit, a take and an ack per task. NOTE: the ack used to wait ACK_DELAY_MS (5 ms) to ride on the next
    // take (2 calls per task), which held every completion (its waiters, `completed` listeners, a flow's
    // dependents) 5 ms at low load; with nothing else running in the worker it now goes at once. Under load,
    // acks still ride on takes (the benchmark's 1.4 calls per task).
    const perTask = ((await scriptCalls(admin)) - before) / n;
    expect(perTask).toBeLessThanOrEqual(3.05);
    // Nothing else comes: the last task's ack goes out within a few ms all the same.
    await waitFor(async () => (await producer.inspect.getCounts('la')).running === 0, { timeoutMs: 1000, message: 'the last task acked' });
    expect(await producer.inspect.getCounts('la')).toMatchObject({ running: 0, ready: 0, done: n + 1 });
  });
});
