/**
 * The fleet-wide limits as events and metrics show them (issue 28, items 3 and 6), against real servers
 * (single and cluster): the local `rateLimited` event, the `tasks_rate_limited_total` counter and the
 * scrape-time gauges of the limits.
 *
 * Failure matrix (what each cell covers):
 * | cell                                        | checked                                                               |
 * | a handler throws RateLimitedError           | an `@OnTaskEvent(type, 'rateLimited')` listener and a `'*'` one get `{ event: 'rateLimited', scope: 'local', task: { id, type, attempt }, error: RateLimitedError(retryAfterMs) }` once Redis holds the pause (limitedUntil set when it runs); the task waits again, no attempt spent; the counter counts it; `rate_limited` is 1 |
 * | thrown again and again                      | one event and one count per hand-back (3), then the run that succeeds is still attempt 1 |
 * | fleet listeners                             | `'*'` with `scope: 'fleet'` does not ask for the local-only event       |
 * | limits from the options                     | `rate_limit_per_second` (max / perMs), `global_concurrency`, `leases_live` (tasks holding a lease), `rate_limited` 0 |
 * | an operator's overrides                     | the gauges follow `setRateLimit` / `setGlobalConcurrency(null)` (absent: no limit) and `resetLimits` at the next scrape |
 * | a type without limits, an ordered type      | no limit gauges but `leases_live` 0 and `rate_limited` 0; the ordered type has none of them |
 * | waiting tasks per priority                  | no `tasks_waiting_by_priority` sample while no task has a priority (the gauge's filling from `counts.priorities` is in libs/.../metrics/limit-gauges.spec.ts) |
 */
import { Injectable } from '@nestjs/common';
import { Registry } from 'prom-client';
import { OnTaskEvent, RateLimitedError, type Task, type TaskEvent } from 'nestjs-distributed-queue';
import { TaskEventBus } from 'nestjs-distributed-queue/events/task-event-bus';
import { parseExposition, sampleValue, type Sample } from './support/prometheus';
import { useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { waitFor } from './support/wait';

const scrape = async (registry: Registry): Promise<Sample[]> => parseExposition(await registry.metrics());

describe.each(getTargets().map((t) => [t.name, t] as const))('limits in events and metrics on %s', (_name, target: RedisTarget) => {
  const { start } = useQueueApps(target);

  it('a RateLimitedError reaches @OnTaskEvent listeners as rateLimited, once Redis holds the pause, and is counted', async () => {
    const registry = new Registry();
    const runs: string[] = [];
    const thrown = new Map<string, number>();
    const W = workerClass('rl.ev', { concurrency: 2, pollIntervalMs: 100 }, (task: Task) => {
      runs.push(`${task.id}:${task.attempt}`);
      if (task.id === 'long') throw new RateLimitedError(600_000);
    });
    const Again = workerClass('rl.again', { pollIntervalMs: 100 }, (task: Task) => {
      runs.push(`${task.id}:${task.attempt}`);
      const n = (thrown.get(task.id) ?? 0) + 1;
      thrown.set(task.id, n);
      if (n <= 3) throw new RateLimitedError(20);
    });
    const own: { event: TaskEvent; limitedUntil: number | null }[] = [];
    const any: string[] = [];
    let app!: Awaited<ReturnType<typeof start>>;
    @Injectable()
    class Listener {
      @OnTaskEvent('rl.ev', 'rateLimited')
      async onLimited(event: TaskEvent) {
        own.push({ event, limitedUntil: (await app.control.getLimits('rl.ev')).limitedUntil });
      }

      @OnTaskEvent('*', '*')
      onAny(event: TaskEvent) {
        any.push(`${event.task.id}:${event.event}`);
      }

      @OnTaskEvent('*', '*', { scope: 'fleet' })
      onFleet() {}
    }
    app = await start({ connection: target.connection, keyPrefix: uniquePrefix('rl-events'), metrics: { registry } }, [W, Again, Listener]);
    const bus = app.app.get(TaskEventBus);
    expect([bus.wants('local', 'rl.ev', 'rateLimited'), bus.wants('fleet', 'rl.ev', 'rateLimited'), bus.wants('fleet', 'rl.ev', 'failed')]).toEqual([true, false, true]);

    await app.submit.submit('rl.ev', { n: 1 }, { id: 'long' });
    await waitFor(() => own.length === 1, { timeoutMs: 10_000, message: 'the rateLimited event' });
    const [{ event, limitedUntil }] = own;
    expect(event).toMatchObject({ event: 'rateLimited', scope: 'local', task: { id: 'long', type: 'rl.ev', attempt: 1, payload: { n: 1 } } });
    expect(event.error).toBeInstanceOf(RateLimitedError);
    expect((event.error as RateLimitedError).retryAfterMs).toBe(600_000);
    expect(event.durationMs).toBeGreaterThanOrEqual(0);
    expect(typeof event.startedAt).toBe('number');
    // emitted once the pause was written: the listener read it back
    expect(limitedUntil).not.toBeNull();
    await waitFor(async () => (await app.inspect.getState('rl.ev', 'long')) === 'ready', { timeoutMs: 10_000, message: 'long handed back' });
    expect((await app.inspect.getTask('rl.ev', 'long')).attempts).toBe(0);

    await app.submit.submit('rl.again', {}, { id: 'again' });
    await waitFor(() => runs.includes('again:1') && thrown.get('again') === 4, { timeoutMs: 10_000, message: 'again ran after 3 hand-backs' });
    expect(runs.filter((r) => r.startsWith('again:'))).toEqual(['again:1', 'again:1', 'again:1', 'again:1']);
    await waitFor(() => any.includes('again:completed'), { timeoutMs: 10_000, message: 'again completed' });
    expect(any.filter((e) => e.startsWith('again:'))).toEqual(['again:rateLimited', 'again:rateLimited', 'again:rateLimited', 'again:completed']);
    expect(any.filter((e) => e.startsWith('long:'))).toEqual(['long:rateLimited']);

    const samples = await scrape(registry);
    expect([
      sampleValue(samples, 'dq_tasks_rate_limited_total', { type: 'rl.ev' }),
      sampleValue(samples, 'dq_tasks_rate_limited_total', { type: 'rl.again' }),
      sampleValue(samples, 'dq_tasks_failed_total', { type: 'rl.again' }),
      sampleValue(samples, 'dq_rate_limited', { type: 'rl.ev' }),
    ]).toEqual([1, 3, undefined, 1]);
  });

  it('gauges show the limits in force, the live leases and whether a type is rate-limited now', async () => {
    const registry = new Registry();
    const prefix = uniquePrefix('rl-gauges');
    const held: (() => void)[] = [];
    const W = workerClass('rl.g', { concurrency: 4, rateLimit: { max: 20, perMs: 1000 }, globalConcurrency: 4, pollIntervalMs: 100 }, () =>
      new Promise<void>((resolve) => held.push(resolve)));
    const Ordered = workerClass('rl.ord', { ordered: true }, () => undefined);
    const app = await start({
      connection: target.connection, keyPrefix: prefix, route: routeTestOptions(prefix, 'm1', 2), types: { 'rl.none': {} }, metrics: { registry },
    }, [W, Ordered]);
    try {
      await app.submit.submitMany('rl.g', [1, 2, 3].map((i) => ({ payload: i })));
      await waitFor(() => held.length === 3, { timeoutMs: 10_000, message: '3 running' });
      const gauges = async (type: string) => {
        const s = await scrape(registry);
        const of = (name: string) => sampleValue(s, `dq_${name}`, { type });
        return { rate: of('rate_limit_per_second'), concurrency: of('global_concurrency'), leases: of('leases_live'), limited: of('rate_limited') };
      };
      // the options reach Redis as the worker starts (its first renewal tick)
      await waitFor(async () => (await gauges('rl.g')).concurrency === 4, { timeoutMs: 10_000, message: 'the options written' });
      expect(await gauges('rl.g')).toEqual({ rate: 20, concurrency: 4, leases: 3, limited: 0 });
      expect(await gauges('rl.none')).toEqual({ rate: undefined, concurrency: undefined, leases: 0, limited: 0 });
      expect(await gauges('rl.ord')).toEqual({ rate: undefined, concurrency: undefined, leases: undefined, limited: undefined });

      await app.control.setRateLimit('rl.g', { max: 30, perMs: 60_000 });
      await app.control.setGlobalConcurrency('rl.g', null);
      expect(await gauges('rl.g')).toEqual({ rate: 0.5, concurrency: undefined, leases: 3, limited: 0 });
      await app.control.resetLimits('rl.g');
      expect(await gauges('rl.g')).toEqual({ rate: 20, concurrency: 4, leases: 3, limited: 0 });

      held.splice(0).forEach((release) => release());
      await waitFor(async () => (await gauges('rl.g')).leases === 0, { timeoutMs: 10_000, message: 'leases given back' });
      expect((await scrape(registry)).filter((s) => s.name === 'dq_tasks_waiting_by_priority')).toEqual([]);
    } finally {
      held.splice(0).forEach((release) => release());
    }
  });
});
