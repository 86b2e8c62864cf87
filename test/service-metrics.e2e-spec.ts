import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { Registry } from 'prom-client';
import { TaskInspectorService, TaskSubmitService, type Task } from 'nestjs-distributed-queue';
import { parseExposition, sampleValue } from './support/prometheus';
import { untilAborted, workerClass } from './support/queue-app';
import { getFreePort } from './support/redis-server';
import { startHttpQueueApp } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const secret = 'metrics-service-secret-0123456789';

describe.each(getTargets().map((t) => [t.name, t] as const))('metrics of a service-mode application on %s', (_name, target) => {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    // The application first: it leaves the registry before the scheduler stops.
    for (const app of apps.splice(0).reverse()) await app.close();
  });

  it("count the runs of the application's handlers: completions, failed attempts, durations and lateness", async () => {
    const keyPrefix = uniquePrefix('svc-metrics');
    const [schedulerPort, clientPort] = [await getFreePort(), await getFreePort()];
    const registry = new Registry();
    apps.push(await startHttpQueueApp({ connection: target.connection, keyPrefix, mode: 'scheduler', scheduler: { secret, syncIntervalMs: 100 } }, [], schedulerPort));
    const Worker = workerClass('sm.work', { maxAttempts: 2, timeoutMs: 1000, backoff: { type: 'fixed', delayMs: 10, jitter: 0 } }, async (task: Task, signal: AbortSignal) => {
      if (task.id === 'slow') await untilAborted(signal); // past its timeoutMs: a failed attempt (504)
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (task.id.startsWith('bad')) throw new Error(`bad ${task.id}`);
    });
    const client = await startHttpQueueApp(
      {
        connection: target.connection, keyPrefix, mode: 'service', metrics: { registry, prefix: 'dqs_' },
        service: { appName: 'metered', secret, publicUrl: `http://127.0.0.1:${clientPort}`, heartbeatMs: 200 },
      },
      [Worker],
      clientPort,
    );
    apps.push(client);
    const ids = ['good1', 'good2', 'good3', 'bad1', 'bad2', 'slow'];
    await client.get(TaskSubmitService).submitMany('sm.work', ids.map((id) => ({ id, payload: id })));
    const inspect = client.get(TaskInspectorService);
    await waitFor(async () => {
      const c = await inspect.getCounts('sm.work');
      return c.done === 3 && c.dead === 3;
    }, { timeoutMs: 30_000, message: '3 done and 3 dead' });

    const samples = parseExposition(await registry.metrics());
    const of = (name: string, labels: Record<string, string> = {}) => sampleValue(samples, `dqs_${name}`, { type: 'sm.work', ...labels });
    expect(of('tasks_submitted_total')).toBe(6);
    expect(of('tasks_completed_total')).toBe(3);
    expect(of('tasks_failed_total')).toBe(6); // two attempts of each bad task and of the slow one
    expect(of('handler_duration_seconds_count')).toBe(3);
    // Each successful handler waited 20 ms: the sum is at least 3 × 20 ms (no upper bound: the machine may be loaded).
    expect(of('handler_duration_seconds_sum')).toBeGreaterThanOrEqual(0.057);
    expect(of('lateness_seconds_count')).toBe(9); // every attempt that ran, completed or failed
    // Retries and dead letters are the scheduler's decisions: counted by the scheduler, not here.
    expect([of('tasks_retried_total'), of('tasks_dead_total')]).toEqual([undefined, undefined]);
  });

  it('count them too in an application without Redis (service.url)', async () => {
    const keyPrefix = uniquePrefix('svc-metrics-url');
    const [schedulerPort, clientPort] = [await getFreePort(), await getFreePort()];
    const registry = new Registry();
    apps.push(await startHttpQueueApp({ connection: target.connection, keyPrefix, mode: 'scheduler', scheduler: { secret, syncIntervalMs: 100 } }, [], schedulerPort));
    const Worker = workerClass('smu.work', { maxAttempts: 1 }, (task: Task) => {
      if (task.id === 'bad') throw new Error('bad');
    });
    const client = await startHttpQueueApp(
      {
        mode: 'service', metrics: { registry, prefix: 'dqu_' },
        service: { appName: 'metered-url', secret, publicUrl: `http://127.0.0.1:${clientPort}`, heartbeatMs: 200, url: `http://127.0.0.1:${schedulerPort}` },
      },
      [Worker],
      clientPort,
    );
    apps.push(client);
    await client.get(TaskSubmitService).submitMany('smu.work', ['good1', 'good2', 'bad'].map((id) => ({ id, payload: id })));
    const inspect = client.get(TaskInspectorService);
    await waitFor(async () => {
      const states = await Promise.all(['good1', 'good2', 'bad'].map((id) => inspect.getState('smu.work', id)));
      return states.join() === 'done,done,dead';
    }, { timeoutMs: 20_000, message: '2 done and 1 dead' });
    const samples = parseExposition(await registry.metrics());
    const of = (name: string) => sampleValue(samples, `dqu_${name}`, { type: 'smu.work' });
    expect([of('tasks_completed_total'), of('tasks_failed_total'), of('handler_duration_seconds_count'), of('lateness_seconds_count')]).toEqual([2, 1, 2, 3]);
  });
});
