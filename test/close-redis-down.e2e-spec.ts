import type { Task } from 'nestjs-distributed-queue';
import { HAND_BACK_MS } from 'nestjs-distributed-queue/delay/consumer-bounds';
import { SHUTDOWN_CALL_MS } from 'nestjs-distributed-queue/runtime/graceful-stop';
import { startQueueApp, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

describe('closing an application while Redis is down (a server of its own, killed)', () => {
  let server: RedisServerHandle;
  beforeAll(async () => {
    server = await startRedisServer({ extraArgs: ['--save', ''] });
  });
  afterAll(() => server.remove());

  it('close() ends within the shutdown timeout and a few seconds, with delay and ordered workers busy', async () => {
    const prefix = uniquePrefix('close-down');
    let ran = 0;
    const D = workerClass('cd.delay', { concurrency: 4 }, () => void ran++);
    const O = workerClass('cd.ordered', { ordered: true, concurrency: 4 }, (task: Task) => void (ran += task.key ? 1 : 0));
    const app = await startQueueApp(
      { connection: server.url, keyPrefix: prefix, shutdownTimeoutMs: 500, route: routeTestOptions('q', 'solo', 4) },
      [D, O],
    );
    await app.submit.submitMany('cd.delay', Array.from({ length: 20 }, (_, i) => ({ payload: { i } })));
    await app.submit.submitOrderedMany('cd.ordered', Array.from({ length: 20 }, (_, i) => ({ key: `k${i % 4}`, payload: { i } })));
    await waitFor(() => ran >= 40, { timeoutMs: 10_000, message: 'every task ran' });
    server.kill('SIGKILL');
    await waitFor(() => !server.isRunning(), { timeoutMs: 5000, message: 'redis-server gone' });
    const started = performance.now();
    await app.close();
    const took = performance.now() - started;
    console.log(`[close-down] close() with Redis down took ${Math.round(took)} ms`);
    // The design's bound: the grace (0.5 s); the hand-back of what did not finish (HAND_BACK_MS); then the stop's
    // own calls in sequence (leaving, the last acks), each at most SHUTDOWN_CALL_MS (ioredis alone would hold
    // them ~10 s); and 2 s for the rest (closing the connections) on a loaded machine. Usually a few ms (Redis
    // gone, the calls fail at once); once 5.2 s in a full run, when the connection was still reconnecting.
    expect(took).toBeLessThan(500 + HAND_BACK_MS + 2 * SHUTDOWN_CALL_MS + 2000);
  }, 60_000);
});
