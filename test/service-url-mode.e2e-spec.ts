import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedQueueModule, signDelivery, TypeOwnedError } from 'nestjs-distributed-queue';
import { killAllChildren } from './support/child';
import { workerClass } from './support/queue-app';
import { api, command, runs, SERVICE_SECRET, startClient, startScheduler, type HttpChild } from './support/service-mode';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { waitFor } from './support/wait';

const redisPorts = (target: RedisTarget): number[] =>
  typeof target.connection === 'string' ? [Number(new URL(target.connection).port)] : target.connection.cluster.map((n) => n.port);

const liveInstances = async (scheduler: HttpChild, app: string): Promise<number> =>
  (await api(scheduler, 'GET', '/api/apps')).body.find((x: { app: string }) => x.app === app)?.instances.length ?? 0;

describe.each(getTargets().map((t) => [t.name, t] as const))('service mode without Redis in the application (service.url) on %s', (_name, target) => {
  const opened: INestApplication[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((app) => app.close()));
    await killAllChildren();
  });

  it('registers, submits, reschedules, cancels and reads state through the scheduler; opens no Redis connection', async () => {
    const prefix = uniquePrefix('svc-url');
    const scheduler = await startScheduler(target, prefix);
    const [a, b] = await Promise.all(
      ['mail-a', 'mail-b'].map((instance) => startClient(target, prefix, { app: 'mail', instance, types: ['mail.send'], schedulerUrl: scheduler.url })),
    );
    await waitFor(async () => (await liveInstances(scheduler, 'mail')) === 2, { timeoutMs: 10_000, message: 'both registered' });
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => command(a, 'submit', { taskType: 'mail.send', id: `m${i}` })));
    expect(ids).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`));
    await waitFor(() => runs(a, 'done').length + runs(b, 'done').length >= 10, { timeoutMs: 10_000, message: 'delivered' });
    expect([...runs(a), ...runs(b)].map((r) => r.id).sort()).toEqual([...ids].sort());

    await command(b, 'submit', { taskType: 'mail.send', id: 'later', delay: 60_000 });
    expect(await command(a, 'state', { taskType: 'mail.send', id: 'later' })).toBe('delayed');
    expect(await command(a, 'reschedule', { taskType: 'mail.send', id: 'later', delay: 50 })).toBe(true);
    await waitFor(() => [...runs(a, 'done'), ...runs(b, 'done')].some((r) => r.id === 'later'), { timeoutMs: 5000, message: 'rescheduled task ran' });
    await waitFor(async () => (await command(a, 'state', { taskType: 'mail.send', id: 'later' })) === 'done', { timeoutMs: 3000 });

    await command(a, 'submit', { taskType: 'mail.send', id: 'never', delay: 60_000 });
    expect(await command(a, 'cancel', { taskType: 'mail.send', id: 'never' })).toBe('cancelled');
    expect(await command(a, 'state', { taskType: 'mail.send', id: 'never' })).toBe('unknown');
    await expect(command(a, 'counts', { taskType: 'mail.send' })).rejects.toMatchObject({ name: 'NoRedisConnectionError' });

    const ports = redisPorts(target);
    for (const child of [a, b]) {
      const remote: number[] = await command(child, 'sockets');
      expect(remote.filter((port) => ports.includes(port) || port === 6379)).toEqual([]);
    }
    a.kill('SIGTERM');
    await a.exited;
    await waitFor(async () => (await liveInstances(scheduler, 'mail')) === 1, { timeoutMs: 5000, message: 'left through the scheduler' });
  });

  it("the scheduler refuses a call not signed with the shared secret, or replayed (401), and one it cannot read (400)", async () => {
    const scheduler = await startScheduler(target, uniquePrefix('svc-url-auth'));
    const call = (body: string, headers: Record<string, string>) =>
      fetch(`${scheduler.url}/dq/service`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const body = JSON.stringify({ op: 'get', type: 'mail.send', id: 'x' });
    const forged = await call(body, signDelivery('not-the-shared-secret-000', Date.now(), 'mail:get:1', body));
    expect(forged.status).toBe(401);
    const signed = signDelivery('test-service-secret-0123456789', Date.now(), 'mail:get:2', body);
    const first = await call(body, signed);
    expect(first.status).toBe(200);
    expect(((await first.json()) as { result: { state: string } }).result.state).toBe('unknown');
    expect((await call(body, signed)).status).toBe(401);
    const bad = JSON.stringify({ op: 'submit', type: 'mail.send', tasks: 'nope', requestId: 'r' });
    const refused = await call(bad, signDelivery('test-service-secret-0123456789', Date.now(), 'mail:submit:3', bad));
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { name: string } }).error.name).toBe('InvalidArgumentError');
  });

  it('an application registering a type another application owns fails its start with TypeOwnedError (as with Redis), writing nothing', async () => {
    const prefix = uniquePrefix('svc-url-owned');
    const scheduler = await startScheduler(target, prefix);
    const urlClient = (app: string, types: string[]) => {
      @Module({
        imports: [
          DistributedQueueModule.forRoot({
            mode: 'service',
            service: { appName: app, secret: SERVICE_SECRET, publicUrl: 'http://127.0.0.1:1', instanceId: `${app}-1`, url: scheduler.url },
          }),
        ],
        providers: types.map((type) => workerClass(type, {}, () => 1)),
      })
      class UrlClientModule {}
      return UrlClientModule;
    };
    const billing = await NestFactory.create(urlClient('billing', ['invoice.send']), { logger: false, abortOnError: false });
    opened.push(billing);
    await billing.init();
    const shop = await NestFactory.create(urlClient('shop', ['mine', 'invoice.send']), { logger: false, abortOnError: false });
    opened.push(shop);
    const refused = shop.init();
    await expect(refused).rejects.toBeInstanceOf(TypeOwnedError);
    await expect(refused).rejects.toMatchObject({ type: 'invoice.send', owner: 'billing', app: 'shop' });
    const apps = (await api(scheduler, 'GET', '/api/apps')).body as { app: string; types: Record<string, unknown> }[];
    expect(apps.map((a) => a.app)).toEqual(['billing']);
  });
});
