/**
 * A `service.url` application (no Redis: it reaches the queue through the scheduler's HTTP endpoint) while its
 * scheduler is away.
 *
 * Failure matrix cells (docs/failure-matrix.md, service mode): "Scheduler as the HTTP peer of a `service.url`
 * app": the scheduler behind a TCP proxy of the test's own, then
 * | down (connections refused) | a submit rejects at once with SchedulerRequestError (status 0), nothing written |
 * | black-holed (proxy stall)  | a submit rejects within the call bound (10 s) + slack, typed the same          |
 * | back                       | submits work again by themselves                                              |
 */
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedQueueModule, SchedulerRequestError, TaskSubmitService } from 'nestjs-distributed-queue';
import { workerClass } from './support/queue-app';
import { api, SERVICE_SECRET, startScheduler } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';
import { waitFor } from './support/wait';

const target = getTargets()[0];

describe('a service.url application while its scheduler is away', () => {
  let app: INestApplication | undefined;
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    await app?.close();
    await proxy?.close();
  });

  it('submits fail fast (refused) or within the call bound (black-holed), typed, and work again once it is back', async () => {
    const prefix = uniquePrefix('svc-url-away');
    const scheduler = await startScheduler(target, prefix);
    try {
      proxy = await startTcpProxy({ port: scheduler.port }, undefined, { raw: true });
      @Module({
        imports: [
          DistributedQueueModule.forRoot({
            mode: 'service',
            service: { appName: 'away', secret: SERVICE_SECRET, publicUrl: 'http://127.0.0.1:1', instanceId: 'away-1', url: `http://127.0.0.1:${proxy.port}` },
          }),
        ],
        providers: [workerClass('away.task', {}, () => 1)],
      })
      class AwayModule {}
      app = await NestFactory.create(AwayModule, { logger: false, abortOnError: false });
      await app.init();
      const submit = app.get(TaskSubmitService);
      await submit.submit('away.task', {}, { id: 'before', delay: 60_000 });

      proxy.down(true);
      let started = performance.now();
      const refused = await submit.submit('away.task', {}, { id: 'refused', delay: 60_000 }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(SchedulerRequestError);
      expect(performance.now() - started).toBeLessThan(2000);
      proxy.down(false);

      proxy.stall(true);
      started = performance.now();
      const silent = await submit.submit('away.task', {}, { id: 'silent', delay: 60_000 }).catch((e: unknown) => e);
      const took = performance.now() - started;
      expect(silent).toBeInstanceOf(SchedulerRequestError);
      expect(took).toBeGreaterThanOrEqual(9000);
      expect(took).toBeLessThan(10_000 + 3000);
      proxy.stall(false);
      proxy.cut(); // the connection whose bytes were dropped is unusable

      await waitFor(() => submit.submit('away.task', {}, { id: 'after', delay: 60_000 }).then(() => true, () => false), { timeoutMs: 10_000, message: 'submits work again' });
      const state = async (id: string) => (await api(scheduler, 'GET', `/api/tasks/away.task/${id}`)).body?.state;
      expect(await state('before')).toBe('delayed');
      expect(await state('refused')).toBe('unknown');
      expect(await state('after')).toBe('delayed');
    } finally {
      scheduler.kill('SIGTERM');
      await scheduler.exited;
    }
  }, 90_000);
});
