import * as path from 'path';
import { register, Registry } from 'prom-client';
import { TaskScheduleService, type Task, type TaskCounts, type TaskEvent, type TaskEventName } from 'nestjs-distributed-queue';
import { TaskEventBus } from 'nestjs-distributed-queue/events/task-event-bus';
import { withTimeout } from 'nestjs-distributed-queue/runtime/with-timeout';
import { spawnChild, killAllChildren, REPO_ROOT } from './support/child';
import { startSampleApp } from './support/http';
import { parseExposition, sampleValue, type Sample } from './support/prometheus';
import { startQueueApp, useQueueApps, workerClass, type QueueApp } from './support/queue-app';
import { startRedisServer } from './support/redis-server';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { waitFor } from './support/wait';

const STATES = ['delayed', 'ready', 'running', 'dead', 'done'] as const;

async function scrape(registry: Registry): Promise<Sample[]> {
  return parseExposition(await registry.metrics());
}

/** Expects the `tasks` gauge of `type` to show `counts`, state by state. */
function expectTaskGauges(samples: Sample[], prefix: string, type: string, counts: TaskCounts): void {
  const shown = Object.fromEntries(STATES.map((state) => [state, sampleValue(samples, `${prefix}tasks`, { type, state })]));
  expect(shown).toEqual(Object.fromEntries(STATES.map((state) => [state, counts[state]])));
}

describe.each(getTargets().map((t) => [t.name, t] as const))('metrics on %s', (_name, target: RedisTarget) => {
  const { start } = useQueueApps(target);

  /** Runs 7 tasks that succeed and 3 that fail twice into dead letters; 2 more wait, 2 of another type are ready. */
  async function runMixedBatch(registry: Registry, prefix: string): Promise<QueueApp> {
    const W = workerClass('m.work', { concurrency: 4, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 10, jitter: 0 }, pollIntervalMs: 100 }, (task: Task) => {
      if (task.id.startsWith('bad')) throw new Error(`bad ${task.id}`);
    });
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('metrics'), types: { 'm.idle': {} }, metrics: { registry, prefix } }, [W]);
    const good = Array.from({ length: 7 }, (_, i) => ({ id: `good${i}`, payload: i }));
    const bad = Array.from({ length: 3 }, (_, i) => ({ id: `bad${i}`, payload: i }));
    await app.submit.submitMany('m.work', [...good, ...bad]);
    await app.submit.submitMany('m.work', [{ id: 'later1', payload: 0, delay: 60_000 }, { id: 'later2', payload: 0, delay: 60_000 }]);
    await app.submit.submit('m.work', 'again', { id: 'later1', delay: 60_000 }); // exists: creates nothing
    await app.submit.submitMany('m.idle', [{ payload: 1 }, { payload: 2 }]);
    await waitFor(async () => {
      const c = await app.inspect.getCounts('m.work');
      return c.done === 7 && c.dead === 3 && c.running === 0 && c.ready === 0;
    }, { timeoutMs: 15_000, message: '7 done and 3 dead' });
    return app;
  }

  it('counts what this instance submitted and shows getCounts as gauges, in the registry given only', async () => {
    const registry = new Registry();
    const app = await runMixedBatch(registry, 'dqt_');
    const samples = await scrape(registry);
    expect(sampleValue(samples, 'dqt_tasks_submitted_total', { type: 'm.work' })).toBe(12);
    expect(sampleValue(samples, 'dqt_tasks_submitted_total', { type: 'm.idle' })).toBe(2);
    expectTaskGauges(samples, 'dqt_', 'm.work', await app.inspect.getCounts('m.work'));
    expectTaskGauges(samples, 'dqt_', 'm.idle', { delayed: 0, ready: 2, running: 0, dead: 0, done: 0 });
    expect(register.getSingleMetric('dqt_tasks_submitted_total')).toBeUndefined();
    expect(await register.metrics()).not.toContain('dqt_');
  });

  it('shows each schedule (distributed cron) with its next and last tick', async () => {
    const registry = new Registry();
    const ran: string[] = [];
    const W = workerClass('m.tick', { pollIntervalMs: 100 }, (task: Task) => void ran.push(task.id));
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('metrics-cron'), schedules: true, metrics: { registry, prefix: 'dqc_' } }, [W]);
    const schedule = await app.app.get(TaskScheduleService).upsert('m.every', { everyMs: 1000, type: 'm.tick' });
    let samples = await scrape(registry);
    expect(sampleValue(samples, 'dqc_schedule_next_tick_timestamp_seconds', { schedule: 'm.every' })).toBe(schedule.nextTickAt! / 1000);
    await waitFor(() => ran.length >= 1, { timeoutMs: 5000, message: 'a tick ran' });
    samples = await scrape(registry);
    expect(sampleValue(samples, 'dqc_schedule_last_tick_timestamp_seconds', { schedule: 'm.every' })).toBe(Number(ran[0].split('@')[1]) / 1000);
  });

  // NOTE: needs the engines' local lifecycle events (completed, failed, retrying, dead with durationMs and startedAt).
  it('counts the outcomes of the tasks this instance ran and times its handlers', async () => {
    const registry = new Registry();
    await runMixedBatch(registry, 'dq_');
    const outcomes = async () => {
      const s = await scrape(registry);
      const of = (name: string) => sampleValue(s, `dq_${name}`, { type: 'm.work' });
      return {
        completed: of('tasks_completed_total'), failed: of('tasks_failed_total'), retried: of('tasks_retried_total'), dead: of('tasks_dead_total'),
        durations: of('handler_duration_seconds_count'), lateness: of('lateness_seconds_count'),
      };
    };
    const expected = { completed: 7, failed: 6, retried: 3, dead: 3, durations: 7, lateness: 13 };
    await waitFor(async () => JSON.stringify(await outcomes()) === JSON.stringify(expected), { timeoutMs: 5000, message: 'the event counters' }).catch(() => undefined);
    expect(await outcomes()).toEqual(expected);
  });

  it('counts the local events the bus delivers: histograms of handler time and lateness (events emitted by the test)', async () => {
    const registry = new Registry();
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('metrics-bus'), workers: false, types: { 'm.bus': {} }, metrics: { registry } });
    const bus = app.app.get(TaskEventBus);
    const task = (attempt: number) => ({ id: 't1', type: 'm.bus', payload: undefined, attempt, dueAt: 1_000_000 });
    const emit = (event: TaskEventName, attempt: number, extra: Partial<TaskEvent> = {}) =>
      bus.emit({ event, scope: 'local', task: task(attempt), at: Date.now(), ...extra });
    emit('failed', 1, { error: new Error('x'), durationMs: 5, startedAt: 1_000_250 });
    emit('retrying', 1, { error: new Error('x') });
    emit('completed', 2, { durationMs: 20, startedAt: 999_000 }); // started before due (clock skew): lateness 0
    emit('failed', 1, { error: new Error('y'), durationMs: 7, startedAt: 1_002_000 });
    emit('dead', 1, { error: new Error('y') });
    emit('cancelled', 1);
    emit('recovered', 1);
    bus.emit({ event: 'completed', scope: 'local', task: { ...task(1), type: '__route__.q' }, at: Date.now(), durationMs: 1, startedAt: 1_000_000 });
    await new Promise((resolve) => setImmediate(resolve));

    const samples = await scrape(registry);
    const of = (name: string, labels: Record<string, string> = {}) => sampleValue(samples, `dq_${name}`, { type: 'm.bus', ...labels });
    expect([of('tasks_completed_total'), of('tasks_failed_total'), of('tasks_retried_total'), of('tasks_dead_total')]).toEqual([1, 2, 1, 1]);
    expect([of('handler_duration_seconds_count'), of('handler_duration_seconds_sum'), of('handler_duration_seconds_bucket', { le: '0.01' }), of('handler_duration_seconds_bucket', { le: '0.05' })])
      .toEqual([1, 0.02, 0, 1]);
    expect([of('lateness_seconds_count'), of('lateness_seconds_sum'), of('lateness_seconds_bucket', { le: '0.001' }), of('lateness_seconds_bucket', { le: '0.5' })])
      .toEqual([3, 2.25, 1, 2]);
    expect(samples.filter((s) => s.labels.type === '__route__.q')).toEqual([]);
  });

  it('shows the route queue (partitions this machine owns, live machines) and counts ordered submits', async () => {
    const keyPrefix = uniquePrefix('metrics-route');
    const registry = new Registry();
    const O = workerClass('m.ord', { ordered: true }, () => undefined);
    const app = await start({ connection: target.connection, keyPrefix, route: routeTestOptions('mq', 'mm1', 4), metrics: { registry } }, [O]);
    await app.submit.submitOrderedMany('m.ord', ['a', 'b', 'c'].map((key, n) => ({ key, payload: n })));
    await app.submit.submitOrdered('m.ord', 'a', 9, { delay: 60_000 });
    await waitFor(async () => {
      const status = await app.inspect.getRouteStatus();
      const c = await app.inspect.getCounts('m.ord');
      return status.partitions.every((p) => p.owner === 'mm1') && c.ready === 0 && c.running === 0;
    }, { timeoutMs: 10_000, message: 'mm1 owns every partition and ran the queued tasks' });

    const samples = await scrape(registry);
    expect(sampleValue(samples, 'dq_route_partitions_owned', { queue: 'mq', machine: 'mm1' })).toBe(4);
    expect(sampleValue(samples, 'dq_route_machines_live', { queue: 'mq' })).toBe(1);
    expect(sampleValue(samples, 'dq_tasks_submitted_total', { type: 'm.ord' })).toBe(4);
    expectTaskGauges(samples, 'dq_', 'm.ord', await app.inspect.getCounts('m.ord'));
    expect(sampleValue(samples, 'dq_tasks', { type: 'm.ord', state: 'delayed' })).toBe(1);
    expect(samples.filter((s) => s.labels.type?.startsWith('__route__.'))).toEqual([]);
  });

  it('two applications in one process share the metrics of one registry instead of failing', async () => {
    const registry = new Registry();
    const options = { connection: target.connection, workers: false, types: { 'm.shared': {} }, metrics: { registry } };
    const a = await start({ ...options, keyPrefix: uniquePrefix('metrics-a') });
    const b = await start({ ...options, keyPrefix: uniquePrefix('metrics-b') });
    await a.submit.submitMany('m.shared', [{ payload: 1 }, { payload: 2 }]);
    await b.submit.submit('m.shared', 3);
    expect(sampleValue(await scrape(registry), 'dq_tasks_submitted_total', { type: 'm.shared' })).toBe(3);
  });
});

describe('a scrape while Redis does not answer', () => {
  it('returns within its bound with the last values, and follows the queue again once Redis is back', async () => {
    const server = await startRedisServer();
    const registry = new Registry();
    let app: QueueApp | undefined;
    try {
      app = await startQueueApp({ connection: server.url, keyPrefix: uniquePrefix('metrics-down'), workers: false, types: { 'm.x': {} }, metrics: { registry } });
      await app.submit.submitMany('m.x', [{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
      expect(sampleValue(await scrape(registry), 'dq_tasks', { type: 'm.x', state: 'ready' })).toBe(3);

      server.kill('SIGSTOP');
      for (let i = 0; i < 2; i++) {
        const started = Date.now();
        const samples = await scrape(registry);
        expect(Date.now() - started).toBeLessThan(2500);
        expect(sampleValue(samples, 'dq_tasks', { type: 'm.x', state: 'ready' })).toBe(3);
      }

      server.kill('SIGCONT');
      await app.submit.submit('m.x', 4);
      await waitFor(async () => sampleValue(await scrape(registry), 'dq_tasks', { type: 'm.x', state: 'ready' }) === 4, {
        timeoutMs: 10_000, message: 'the gauge follows the queue again',
      });
    } finally {
      server.kill('SIGCONT');
      await app?.close();
      await server.remove();
    }
  });
});

const single = getTargets().find((t) => t.name === 'single');

(single ? describe : describe.skip)('the sample serves its metrics', () => {
  it('GET /metrics gives the text exposition with the queue metrics', async () => {
    const sample = await startSampleApp({ redisUrl: String(single!.connection), keyPrefix: uniquePrefix('metrics-sample'), closeAfterMs: 60_000 });
    try {
      const created = await fetch(`${sample.base}/orders`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ item: 'book', amount: 12 }), signal: AbortSignal.timeout(5000),
      });
      expect(created.status).toBe(201);
      const res = await fetch(`${sample.base}/metrics`, { signal: AbortSignal.timeout(5000) });
      expect(res.status).toBe(200);
      const [mediaType, ...params] = (res.headers.get('content-type') ?? '').split(';').map((p) => p.trim());
      expect([mediaType, params.includes('version=0.0.4')]).toEqual(['text/plain', true]);
      const samples = parseExposition(await res.text());
      expect(sampleValue(samples, 'dq_tasks_submitted_total', { type: 'order.close' })).toBe(1);
      expect(sampleValue(samples, 'dq_tasks', { type: 'order.close', state: 'delayed' })).toBe(1);
      expect(sampleValue(samples, 'dq_route_machines_live', { queue: 'orders-sample' })).toBeGreaterThanOrEqual(1);
    } finally {
      await sample.close();
    }
  });
});

(single ? describe : describe.skip)('without prom-client installed', () => {
  const preload = path.join(REPO_ROOT, 'test', 'fixtures', 'block-prom-client.js');
  const run = (metrics: 'on' | 'off') =>
    spawnChild('test/fixtures/metrics-app.ts', {
      DQ_CONNECTION: JSON.stringify(single!.connection), DQ_PREFIX: uniquePrefix(`metrics-none-${metrics}`), DQ_METRICS: metrics,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`.trim(),
    });
  afterAll(() => killAllChildren());

  it('an application without the metrics option starts and runs a task', async () => {
    const child = run('off');
    expect(await child.waitForMessage((m) => m.type === 'probe', 30_000)).toEqual({ type: 'probe', promClient: false });
    const ran = await child.waitForMessage((m) => m.type === 'ran' || m.type === 'start-failed', 30_000);
    expect(ran).toMatchObject({ type: 'ran' });
    expect(ran.id).toBe(ran.submitted);
    expect((await withTimeout(child.exited, 15_000, 'the child exits')).code).toBe(0);
  });

  it('an application with metrics: true fails at start-up naming the option', async () => {
    const child = run('on');
    expect(await child.waitForMessage((m) => m.type === 'probe', 30_000)).toEqual({ type: 'probe', promClient: false });
    const failed = await child.waitForMessage((m) => m.type === 'ran' || m.type === 'start-failed', 30_000);
    expect(failed).toEqual({
      type: 'start-failed', name: 'InvalidOptionsError', option: 'metrics',
      message: 'Invalid distributed-queue option "metrics": needs the prom-client package (npm i prom-client)',
    });
    expect((await withTimeout(child.exited, 15_000, 'the child exits')).code).toBe(0);
  });
});
