import 'reflect-metadata';
import { Injectable, Module, type LoggerService, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Registry } from 'prom-client';
import {
  DistributedCron, DistributedQueueHealthIndicator, DistributedQueueModule, OnTaskEvent, TaskInspectorService, TaskScheduleService,
  TaskSubmitService, type CronRun, type DistributedQueueModuleOptions, type TaskEvent,
} from 'nestjs-distributed-queue';
import { cronKeys } from 'nestjs-distributed-queue/cron/cron.store';
import { parseExposition } from './support/prometheus';
import { connect, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { waitFor } from './support/wait';

const INTERNAL = /__route__|__cron__/;

/** Every line the application logged, as `level message`. */
function recordingLogger(): { logger: LoggerService; lines: string[] } {
  const lines: string[] = [];
  const push = (level: string) => (message: unknown) => void lines.push(`${level} ${String(message)}`);
  return { logger: { log: push('log'), warn: push('warn'), error: push('error'), debug: push('debug'), verbose: push('verbose') }, lines };
}

async function startApp(options: DistributedQueueModuleOptions, providers: Type<unknown>[], logger: LoggerService) {
  @Module({ imports: [DistributedQueueModule.forRoot(options)], providers })
  class AppModule {}
  const app = await NestFactory.createApplicationContext(AppModule, { logger, abortOnError: false });
  await app.init();
  return app;
}

/** Every event heard by `'*'` (local, fleet), and by a listener that names the cron run type of `isweep` itself. */
const heard: { any: TaskEvent[]; fleet: TaskEvent[]; named: TaskEvent[] } = { any: [], fleet: [], named: [] };

@Injectable()
class Listeners {
  @OnTaskEvent('*', '*')
  any(event: TaskEvent): void {
    heard.any.push(event);
  }

  @OnTaskEvent('*', '*', { scope: 'fleet' })
  fleet(event: TaskEvent): void {
    heard.fleet.push(event);
  }

  @OnTaskEvent('__cron__.isweep', '*')
  named(event: TaskEvent): void {
    heard.named.push(event);
  }
}

/** A @DistributedCron method whose first attempt of each tick fails. */
@Injectable()
class Sweeper {
  runs: CronRun[] = [];
  @DistributedCron('* * * * * *', { name: 'isweep' })
  sweep(run: CronRun): void {
    this.runs.push(run);
    if (run.attempt === 1) throw new Error('first attempt fails');
  }
}

describe.each(getTargets().map((t) => [t.name, t] as const))('internal types on %s', (_name, target: RedisTarget) => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
    heard.any = [];
    heard.fleet = [];
    heard.named = [];
  });

  it("stay out of logs, '*' listeners, health details, metrics and type listings unless asked for", async () => {
    const { logger, lines } = recordingLogger();
    const registry = new Registry();
    const Work = workerClass('it.work', { pollIntervalMs: 100 }, () => undefined);
    const Ordered = workerClass('it.ord', { ordered: true }, () => undefined);
    const app = await startApp(
      { connection: target.connection, keyPrefix: uniquePrefix('internal'), route: routeTestOptions('iq', 'im1', 2), metrics: { registry, prefix: 'dqi_' } },
      [Work, Ordered, Sweeper, Listeners],
      logger,
    );
    close = () => app.close();
    const submit = app.get(TaskSubmitService);
    await submit.submitOrdered('it.ord', 'k', 1, { delay: 200 }); // through the delay queue's internal mover
    await submit.submit('it.work', 1);
    const sweeper = app.get(Sweeper);
    await waitFor(() => heard.any.some((e) => e.task.type === 'it.ord' && e.event === 'completed') && heard.named.some((e) => e.event === 'completed'), {
      timeoutMs: 15_000, message: 'the delayed ordered task and a cron run (its second attempt) completed',
    });
    expect(sweeper.runs.length).toBeGreaterThanOrEqual(2);

    // '*' hears the user's types only; a listener naming the internal type hears it.
    await waitFor(() => ['it.work', 'it.ord'].every((type) => heard.fleet.some((e) => e.task.type === type && e.event === 'completed')), {
      timeoutMs: 10_000, message: "the fleet '*' listener heard both completions",
    });
    expect(heard.any.filter((e) => INTERNAL.test(e.task.type))).toEqual([]);
    expect(heard.fleet.filter((e) => INTERNAL.test(e.task.type))).toEqual([]);
    expect(heard.any.some((e) => e.task.type === 'it.work' && e.event === 'completed')).toBe(true);
    expect(heard.named.map((e) => e.event)).toEqual(expect.arrayContaining(['failed', 'retrying', 'completed']));

    // Logs name the schedule, never the internal type.
    expect(lines.filter((l) => INTERNAL.test(l))).toEqual([]);
    expect(lines).toContain('log Delay queue workers started for: it.work');
    expect(lines.some((l) => /^warn \[schedule "isweep"\] task isweep@\d+ attempt 1 failed \(Error: first attempt fails\): retried$/.test(l.split('\n')[0]))).toBe(true);

    // Health: the user's consumers by default; the internal ones when asked for.
    const health = app.get(DistributedQueueHealthIndicator);
    const detail = (await health.isHealthy())['distributed-queue'];
    expect(detail.status).toBe('up');
    expect(Object.keys(detail.consumers)).toEqual(['it.work']);
    const all = (await health.isHealthy('q', { includeInternalTypes: true })).q;
    expect(Object.keys(all.consumers).sort()).toEqual(['__cron__', '__cron__.isweep', '__route__.iq', 'it.work']);

    // Metrics and type listings: the user's types only.
    const samples = parseExposition(await registry.metrics());
    expect(samples.filter((s) => INTERNAL.test(s.labels.type ?? ''))).toEqual([]);
    expect(samples.some((s) => s.name === 'dqi_tasks_completed_total' && s.labels.type === 'it.ord')).toBe(true);
    expect(app.get(TaskInspectorService).listTypes().map((t) => t.type).sort()).toEqual(['it.ord', 'it.work']);
  });

  it('counts internal types in the metrics when asked for, under their own type labels', async () => {
    const { logger } = recordingLogger();
    const registry = new Registry();
    const app = await startApp(
      { connection: target.connection, keyPrefix: uniquePrefix('internal-metrics'), metrics: { registry, prefix: 'dqj_', includeInternalTypes: true } },
      [Sweeper],
      logger,
    );
    close = () => app.close();
    await waitFor(async () => parseExposition(await registry.metrics()).some((s) => s.name === 'dqj_tasks_completed_total' && s.labels.type === '__cron__.isweep'), {
      timeoutMs: 15_000, message: 'a completed cron run counted under its type',
    });
    const samples = parseExposition(await registry.metrics());
    expect(samples.find((s) => s.name === 'dqj_tasks_failed_total' && s.labels.type === '__cron__.isweep')?.value).toBeGreaterThanOrEqual(1);
  });

  it('a schedule whose tick fails is a warning naming the schedule', async () => {
    const { logger, lines } = recordingLogger();
    const keyPrefix = uniquePrefix('internal-tick');
    const Work = workerClass('it.work', { pollIntervalMs: 100 }, () => undefined);
    const app = await startApp({ connection: target.connection, keyPrefix, schedules: true }, [Work], logger);
    close = () => app.close();
    const redis = connect(target);
    try {
      await app.get(TaskScheduleService).upsert('ibroken', { everyMs: 1000, type: 'it.work' });
      // A definition Redis holds but cannot be read: every tick of the schedule fails.
      await redis.hset(cronKeys(keyPrefix).definitions, 'ibroken', '{not json');
      await waitFor(() => lines.some((l) => l.startsWith('warn [tick of schedule "ibroken"] task ibroken@')), {
        timeoutMs: 10_000, message: 'a warning naming the schedule',
      });
      expect(lines.filter((l) => INTERNAL.test(l))).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });
});

describe('internal consumers in health when Redis stops answering', () => {
  let server: RedisServerHandle | undefined;
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    server?.kill('SIGCONT');
    await close?.();
    await server?.remove();
  });

  it('still make it down, named by what they do, while its consumers list stays empty', async () => {
    server = await startRedisServer();
    const { logger } = recordingLogger();
    const Ordered = workerClass('it.ord', { ordered: true }, () => undefined);
    // The internal mover of delayed ordered tasks takes its options from `defaults`: a short visibility timeout.
    const app = await startApp(
      { connection: server.url, keyPrefix: uniquePrefix('internal-health'), defaults: { visibilityTimeoutMs: 600, pollIntervalMs: 100 }, route: routeTestOptions('hq2', 'hm2', 2) },
      [Ordered],
      logger,
    );
    close = () => app.close();
    const health = app.get(DistributedQueueHealthIndicator);
    expect((await health.isHealthy())['distributed-queue']).toMatchObject({ status: 'up', consumers: {} });
    server.kill('SIGSTOP');
    const down = await waitFor(async () => {
      const { q } = await health.isHealthy('q', { timeoutMs: 300 });
      return /consumer delayed ordered tasks of route queue "hq2": no contact with Redis/.test(q.message ?? '') ? q : undefined;
    }, { timeoutMs: 10_000, message: 'the internal consumer is reported stale' });
    expect(down.status).toBe('down');
    expect(down.consumers).toEqual({});
    expect(down.message).not.toMatch(INTERNAL);
  });
});
