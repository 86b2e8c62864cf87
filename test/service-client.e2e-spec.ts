import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { DistributedQueueHealthIndicator, DistributedQueueModule, InvalidOptionsError, TypeOwnedError, type DistributedQueueModuleOptions } from 'nestjs-distributed-queue';
import { defineScripts } from 'nestjs-distributed-queue/redis/script-loader';
import { ServiceRegistry } from 'nestjs-distributed-queue/service/service-registry';
import { getFreePort } from './support/redis-server';
import { useQueueApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const secret = 'test-service-secret-0123456789';

describe.each(getTargets().map((t) => [t.name, t] as const))('service client start-up on %s', (_name, target) => {
  const { redis } = useQueueApps(target);
  const opened: INestApplication[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((app) => app.close()));
  });

  const clientModule = (prefix: string, port: number, workers: ReturnType<typeof workerClass>[], extra: DistributedQueueModuleOptions = {}) => {
    @Module({
      imports: [
        DistributedQueueModule.forRoot({
          connection: target.connection,
          keyPrefix: prefix,
          mode: 'service',
          service: { appName: 'shop', secret, publicUrl: `http://127.0.0.1:${port}`, instanceId: 'shop-1', heartbeatMs: 200 },
          ...extra,
        }),
      ],
      providers: workers,
    })
    class ClientModule {}
    return ClientModule;
  };

  const registryOf = (prefix: string): ServiceRegistry => {
    const client = redis();
    defineScripts(client);
    return new ServiceRegistry(client, prefix);
  };

  it('registers its types at start-up and its instance only once it listens; leaves on close', async () => {
    const prefix = uniquePrefix('svc-client');
    const port = await getFreePort();
    const app = await NestFactory.create(clientModule(prefix, port, [workerClass('order.close', { concurrency: 3, timeoutMs: 4000 }, () => 1)]), { logger: false });
    await app.init();
    const registry = registryOf(prefix);
    expect(await registry.types('shop')).toEqual({
      'order.close': {
        concurrency: 3, maxAttempts: 3, timeoutMs: 4000, backoff: { type: 'exponential', delayMs: 1000, maxDelayMs: 3_600_000, jitter: 0.2 }, maxRequestBytes: 4 * 1024 * 1024,
      },
    });
    expect(await registry.instances('shop')).toEqual([]);
    const health = app.get(DistributedQueueHealthIndicator);
    expect((await health.isHealthy())['distributed-queue']).toMatchObject({ status: 'down', service: { status: 'down', app: 'shop', instance: 'shop-1' } });
    await app.listen(port, '127.0.0.1');
    await waitFor(async () => (await registry.instances('shop')).length === 1, { timeoutMs: 3000 });
    expect((await health.isHealthy())['distributed-queue']).toMatchObject({ status: 'up', service: { status: 'up' } });
    expect(await registry.instances('shop')).toEqual([{ id: 'shop-1', url: `http://127.0.0.1:${port}/dq/deliveries` }]);
    await app.close();
    expect(await registry.instances('shop')).toEqual([]);
  });

  it('fails to start when another application owns one of its types (TypeOwnedError), writing nothing', async () => {
    const prefix = uniquePrefix('svc-owned');
    await registryOf(prefix).register('billing', null, { 'invoice.send': { concurrency: 1, maxAttempts: 1, timeoutMs: 1000, backoff: {} } }, 1000);
    const app = await NestFactory.create(
      clientModule(prefix, await getFreePort(), [workerClass('mine', {}, () => 1), workerClass('invoice.send', {}, () => 1)]),
      { logger: false, abortOnError: false },
    );
    opened.push(app);
    await expect(app.init()).rejects.toBeInstanceOf(TypeOwnedError);
    expect(await registryOf(prefix).ownerOf('mine')).toBeNull();
  });

  it('refuses an ordered worker and an application without an HTTP server, naming the option', async () => {
    const prefix = uniquePrefix('svc-refuse');
    const ordered = await NestFactory.create(
      clientModule(prefix, 1, [workerClass('ledger', { ordered: true }, () => 1)], { route: { qId: 'q' } }),
      { logger: false, abortOnError: false },
    );
    opened.push(ordered);
    await expect(ordered.init()).rejects.toMatchObject({ constructor: InvalidOptionsError, option: 'mode' });
    const context = NestFactory.createApplicationContext(clientModule(prefix, 1, [workerClass('x', {}, () => 1)]), { logger: false, abortOnError: false });
    await expect(context).rejects.toMatchObject({ constructor: InvalidOptionsError, option: 'mode' });
  });
});
