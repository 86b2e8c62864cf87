import { DistributedQueueHealthIndicator, type Task } from 'nestjs-distributed-queue';
import { withTimeout } from 'nestjs-distributed-queue/runtime/with-timeout';
import { killAllChildren, spawnChild } from './support/child';
import { startQueueApp, useQueueApps, workerClass, type QueueApp } from './support/queue-app';
import { getFreePort, startRedisServer, type RedisServerHandle } from './support/redis-server';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const Delayed = workerClass('h.delay', { visibilityTimeoutMs: 600, pollIntervalMs: 100 }, () => undefined);
const Ordered = workerClass('h.ord', { ordered: true }, (_task: Task) => undefined);

describe.each(getTargets().map((t) => [t.name, t] as const))('health indicator on %s', (_name, target) => {
  const { start } = useQueueApps(target);

  it('is up with what it checked: Redis, each running consumer, the route machine', async () => {
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('health'), route: routeTestOptions('hq', 'hm1', 2) }, [Delayed, Ordered]);
    const indicator = app.app.get(DistributedQueueHealthIndicator);
    const result = await indicator.isHealthy();
    expect(Object.keys(result)).toEqual(['distributed-queue']);
    const detail = result['distributed-queue'];
    expect(detail).toMatchObject({ status: 'up', redis: { status: 'up' }, route: { status: 'up', queue: 'hq', machine: 'hm1', limitMs: 2000 } });
    expect(detail.message).toBeUndefined();
    expect(Object.keys(detail.consumers)).toEqual(['h.delay']); // the internal mover of delayed ordered tasks: with includeInternalTypes
    expect(detail.consumers['h.delay']).toMatchObject({ status: 'up', limitMs: 600 });
    expect(Object.keys(await indicator.isHealthy('queues'))).toEqual(['queues']);
  });

  it('a producer-only application checks Redis only', async () => {
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('health-producer'), workers: false });
    const { 'distributed-queue': detail } = await app.app.get(DistributedQueueHealthIndicator).isHealthy();
    expect(detail).toEqual({ status: 'up', redis: { status: 'up', responseTimeMs: expect.any(Number) }, memory: { status: 'up', servers: expect.any(Array) }, consumers: {} });
    expect((detail.memory!.servers as unknown[]).length).toBe(target.name === 'single' ? 1 : 3);
  });
});

describe('health indicator when Redis stops answering', () => {
  let server: RedisServerHandle | undefined;
  let app: QueueApp | undefined;
  afterEach(async () => {
    server?.kill('SIGCONT');
    await app?.close();
    await server?.remove();
  });

  it('is down naming Redis, the stale consumer and the silent route machine; up again once Redis is back', async () => {
    server = await startRedisServer();
    app = await startQueueApp({ connection: server.url, keyPrefix: uniquePrefix('health-down'), route: routeTestOptions('hq', 'hm1', 2, 1500, 300) }, [Delayed, Ordered]);
    const indicator = app.app.get(DistributedQueueHealthIndicator);
    expect((await indicator.isHealthy())['distributed-queue'].status).toBe('up');

    server.kill('SIGSTOP');
    const started = Date.now();
    const first = (await indicator.isHealthy('q', { timeoutMs: 300 })).q;
    expect(Date.now() - started).toBeLessThan(1500);
    expect(first).toMatchObject({ status: 'down', redis: { status: 'down', message: 'PING: no reply within 300 ms' } });
    const down = await waitFor(async () => {
      const { q } = await indicator.isHealthy('q', { timeoutMs: 300 });
      return q.consumers['h.delay'].status === 'down' && q.route?.status === 'down' ? q : undefined;
    }, { timeoutMs: 10_000, message: 'the consumer and the route machine are reported stale' });
    expect(down.message).toMatch(/^redis: PING: no reply within 300 ms; .*consumer h\.delay: no contact with Redis for \d+ ms \(limit 600 ms\).*; route: no heartbeat reached Redis for \d+ ms \(offline after 1500 ms\)$/);

    server.kill('SIGCONT');
    await waitFor(async () => (await indicator.isHealthy())['distributed-queue'].status === 'up', { timeoutMs: 15_000, message: 'healthy again' });
  });
});

const single = getTargets().find((t) => t.name === 'single');

(single ? describe : describe.skip)('the sample GET /health (terminus)', () => {
  let server: RedisServerHandle | undefined;
  afterAll(async () => {
    server?.kill('SIGCONT');
    await killAllChildren();
    await server?.remove();
  });

  const health = async (base: string): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(5000) });
    return { status: res.status, body: await res.json() };
  };

  it('answers 200, then 503 naming what failed while its Redis is stopped, then 200 again', async () => {
    server = await startRedisServer();
    const port = await getFreePort();
    const base = `http://127.0.0.1:${port}`;
    const sample = spawnChild('apps/orders/src/main.ts', {
      PORT: String(port), REDIS_URL: server.url, MACHINE_ID: `health-${port}`, LOCAL_REDIS_PORT: '1',
    });
    try {
      const up = await waitFor(async () => {
        const reply = await health(base);
        return reply.status === 200 ? reply : undefined;
      }, { timeoutMs: 60_000, intervalMs: 250, message: 'the sample answers 200 on /health' });
      expect(up.body).toMatchObject({ status: 'ok', info: { 'distributed-queue': { status: 'up', redis: { status: 'up' } } } });
      expect(Object.keys(up.body.info['distributed-queue'].consumers)).toContain('order.close');

      server.kill('SIGSTOP');
      const down = await waitFor(async () => {
        const reply = await health(base);
        return reply.status === 503 ? reply : undefined;
      }, { timeoutMs: 10_000, intervalMs: 250, message: 'the sample answers 503 while Redis is stopped' });
      expect(down.body).toMatchObject({ status: 'error', error: { 'distributed-queue': { status: 'down', redis: { status: 'down' } } } });
      expect(down.body.error['distributed-queue'].message).toMatch(/^redis: PING: no reply within 1000 ms/);

      server.kill('SIGCONT');
      await waitFor(async () => (await health(base)).status === 200, { timeoutMs: 20_000, intervalMs: 250, message: 'the sample answers 200 again' });

      await server.stop(); // killed outright this time, then started again on the same port
      await waitFor(async () => (await health(base)).status === 503, { timeoutMs: 10_000, intervalMs: 250, message: '503 while Redis is gone' });
      await server.restart();
      await waitFor(async () => (await health(base)).status === 200, { timeoutMs: 30_000, intervalMs: 250, message: '200 after the restart' });
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- sample output ---\n${sample.output().slice(-3000)}`);
    } finally {
      server.kill('SIGCONT');
      sample.kill('SIGTERM');
      await withTimeout(sample.exited, 20_000, 'the sample exits on SIGTERM').catch(() => sample.kill('SIGKILL'));
    }
  }, 120_000);
});
