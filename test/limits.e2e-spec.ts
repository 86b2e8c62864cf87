/**
 * Fleet-wide rate limits and concurrency of delay-queue types (issue 28, items 2 and 4), enforced in the
 * reserve script on Redis's clock for every worker together.
 *
 * Failure matrix (each on a single server and on the cluster; workers are separate processes):
 * | cell                                                              | expected                                         |
 * | the reserve script itself: 3 loops reserving as fast as they can under { max 50, perMs 1000, burst 2 } for 3 s | on Redis's clock (the reserves' own time), no sliding 1 s window holds more than max + burst; the achieved rate is the limit's |
 * | rateLimit { max 50, perMs 1000, burst 2 } over 3 worker processes, 150 tasks ready | no sliding 1 s window of handler starts holds more than max + burst + 3 (the starts' jitter across processes, at most 60 ms at 50/s); the achieved rate is the limit's within 10 % |
 * | globalConcurrency 4 over 3 processes of concurrency 5, 60 ms handlers | at most 4 run at once, and 4 do (the slots are used) |
 * | a worker process holding every slot SIGKILLed                     | its slots come back when its leases expire: another process runs the rest |
 * | setGlobalConcurrency / setRateLimit at run time; resetLimits      | the override holds from the next reserve and wakes the workers; getLimits shows configured, override, effective; reset restores the options' |
 * | bad values: options at start-up, arguments at run time, ordered types | InvalidOptionsError / InvalidArgumentError naming the field; nothing written |
 * | Redis restarted empty under running workers with a configured limit | the limit is written again within a lease-renewal period and holds |
 * | a handler throws RateLimitedError(retryAfterMs) (2 apps)         | the task goes back without spending an attempt; no app starts a task of the type for retryAfterMs; getLimits shows limitedUntil; then all run |
 * | a re-sent reserve (the same request id)                           | not charged twice: resend.e2e-spec.ts (the repeat returns before admission) |
 */
import { InvalidArgumentError, InvalidOptionsError, RateLimitedError, type Task } from 'nestjs-distributed-queue';
import { DelayQueueStore } from 'nestjs-distributed-queue/delay/delay-queue.store';
import { killAllChildren, spawnChild, type ChildHandle } from './support/child';
import { connect, startQueueApp, useQueueApps, workerClass, type QueueApp } from './support/queue-app';
import type { Redis } from 'ioredis';
import { startRedisServer } from './support/redis-server';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';
import { busiestWindow } from './support/sliding-window';

interface Report {
  type: 'start' | 'done' | 'ready';
  id: string;
  at: number;
}

function worker(target: RedisTarget, prefix: string, type: string, options: object, env: Record<string, string> = {}): ChildHandle {
  return spawnChild('test/fixtures/worker-app.ts', {
    DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: type, DQ_HOLD_MS: '0', DQ_CONCURRENCY: '10',
    DQ_WORKER_OPTIONS: JSON.stringify(options), ...env,
  });
}

async function ready(children: ChildHandle[]): Promise<void> {
  await Promise.all(children.map((c) => c.waitForMessage((m) => m.type === 'ready', 30_000)));
}

function reports(children: ChildHandle[], kind: Report['type']): Report[] {
  return children.flatMap((c) => c.messages.filter((m: Report) => m.type === kind) as Report[]);
}

/** The most tasks running at once, from start and done reports. */
function mostAtOnce(children: ChildHandle[]): number {
  const edges = children.flatMap((c) => c.messages.filter((m: Report) => m.type === 'start' || m.type === 'done').map((m: Report & { seq?: number }, i: number) => ({ m, i })));
  let running = 0;
  let most = 0;
  // NOTE: each process reports in its own order; across processes, sort by time (done before start at a tie).
  for (const { m } of edges.sort((a, b) => a.m.at - b.m.at || (a.m.type === 'done' ? -1 : 1))) {
    running += m.type === 'start' ? 1 : -1;
    most = Math.max(most, running);
  }
  return most;
}

describe.each(getTargets().map((t) => [t.name, t] as const))('fleet-wide limits on %s', (_name, target) => {
  const { start } = useQueueApps(target);
  afterEach(() => killAllChildren());

  it('the reserve script on Redis\'s clock: no sliding window past max + burst, the rate the limit\'s', async () => {
    const prefix = uniquePrefix('rate-exact');
    const app = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { rx: {} } });
    const store = app.app.get(DelayQueueStore);
    await app.control.setRateLimit('rx', { max: 50, perMs: 1000, burst: 2 });
    await store.submit('rx', Array.from({ length: 400 }, (_, i) => ({ id: `t${i}`, due: { delay: 0 }, payload: '{}' })), 'fill');
    const reserved: number[] = [];
    /** Each call: Redis's time (ms) and how many it reserved. */
    const calls: { now: number; got: number }[] = [];
    const end = Date.now() + 3000;
    await Promise.all([0, 1, 2].map(async (lane) => {
      let acks: [string, string][] = [];
      while (Date.now() < end) {
        const result = await store.take('rx', { count: 5, leaseMs: 30_000, maxAttempts: 3, keepDone: 0, recoverLimit: 10 }, acks, `c.${lane}`, `r${lane}-${reserved.length}`);
        calls.push({ now: result.now, got: result.reserved.length });
        for (const r of result.reserved) reserved.push(result.now);
        acks = result.reserved.map((r) => [r.id, r.token]);
      }
    }));
    const busiest = busiestWindow(reserved, 1000);
    // NOTE: the limiter replayed on the calls as Redis saw them (GCRA, T = 20 ms, burst 2: up to 3 at once):
    // how many each call may reserve depends only on the times of the calls, so a loaded machine that asks
    // late changes what is expected, not whether it holds. (Bounds on elapsed time failed on loaded CI runs:
    // a token unasked for is lost whenever a call comes after the limiter's arrival time, not only after
    // gaps of 60 ms.) Calls in the same millisecond: their total does not depend on their order.
    let tat = 0;
    let expected = 0;
    for (const { now } of [...calls].sort((a, b) => a.now - b.now)) {
      const base = Math.max(tat, now);
      const n = Math.min(5, Math.max(0, Math.floor((now - base) / 20 + 2 + 1e-9) + 1));
      tat = base + n * 20;
      expected += n;
    }
    // eslint-disable-next-line no-console
    console.log(`[rate limit, script ${target.name}] ${reserved.length} reserved in ${calls.length} calls (the limiter replayed: ${expected}); busiest 1 s window ${busiest}`);
    expect(busiest).toBeLessThanOrEqual(52);
    // NOTE: over 3 s at 50/s: more than a second's worth (100 failed once under a loaded full suite: 86, as the
    // replay expected; the calls came late). The replay below is what the limiter must match.
    expect(reserved.length).toBeGreaterThan(50);
    expect(Math.abs(reserved.length - expected)).toBeLessThanOrEqual(1);
  }, 60_000);

  it('a rate limit over 3 processes: no sliding window past max + burst, the rate is the limit\'s', async () => {
    const prefix = uniquePrefix('rate');
    const limit = { max: 50, perMs: 1000, burst: 2 };
    const children = [1, 2, 3].map(() => worker(target, prefix, 'rl', { rateLimit: limit }));
    await ready(children);
    const admin = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { rl: {} } });
    expect((await admin.control.getLimits('rl')).rateLimit).toMatchObject({ configured: limit, effective: limit });
    await admin.submit.submitMany('rl', Array.from({ length: 150 }, (_, i) => ({ payload: i })));
    await waitFor(() => reports(children, 'start').length >= 150, { timeoutMs: 15_000, message: '150 started' });
    const times = reports(children, 'start').map((r) => r.at);
    const busiest = busiestWindow(times, 1000);
    const spanMs = Math.max(...times) - Math.min(...times);
    // eslint-disable-next-line no-console
    console.log(`[rate limit ${target.name}] busiest 1 s window ${busiest}; 150 over ${spanMs} ms; per process ${children.map((c) => c.messages.filter((m: Report) => m.type === 'start').length).join('/')}`);
    // NOTE: handler starts, timed in 3 processes: a start may come up to tens of ms after its reserve.
    expect(busiest).toBeLessThanOrEqual(limit.max + limit.burst + 3);
    // 150 starts at 50/s after a burst of 3: about 2.94 s from the first to the last. The upper bound leaves room
    // for a loaded machine (a worker process stalled past the burst loses tokens by design) and still fails a
    // limiter that grants at half its rate (5.9 s).
    expect(spanMs).toBeGreaterThan(((150 - limit.burst - 1) / limit.max) * 1000 * 0.9);
    expect(spanMs).toBeLessThan(((150 - limit.burst - 1) / limit.max) * 1000 * 1.5 + 800);
  }, 60_000);

  it('a fleet-wide concurrency over 3 processes: at most N at once, and N do run', async () => {
    const prefix = uniquePrefix('gc');
    const children = [1, 2, 3].map(() => worker(target, prefix, 'gc', { globalConcurrency: 4, concurrency: 5 }, { DQ_HOLD_MS: '60' }));
    await ready(children);
    const admin = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { gc: {} } });
    await admin.submit.submitMany('gc', Array.from({ length: 60 }, (_, i) => ({ payload: i })));
    await waitFor(() => reports(children, 'done').length >= 60, { timeoutMs: 20_000, message: '60 done' });
    expect(mostAtOnce(children)).toBe(4);
  }, 60_000);

  it('a process holding every slot SIGKILLed: its slots come back when its leases expire', async () => {
    const prefix = uniquePrefix('gc-kill');
    const holder = worker(target, prefix, 'gck', { globalConcurrency: 3 }, { DQ_HOLD_MS: '60000', DQ_VISIBILITY_MS: '1500' });
    await ready([holder]);
    const admin = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { gck: {} } });
    await admin.submit.submitMany('gck', Array.from({ length: 6 }, (_, i) => ({ payload: i })));
    await waitFor(() => reports([holder], 'start').length === 3, { timeoutMs: 10_000, message: 'the holder took the 3 slots' });
    const other = worker(target, prefix, 'gck', { globalConcurrency: 3 }, { DQ_HOLD_MS: '10', DQ_VISIBILITY_MS: '1500' });
    await ready([other]);
    await sleep(500);
    expect(reports([other], 'start')).toEqual([]); // no slot free
    expect((await admin.control.getLimits('gck')).running).toBe(3);
    holder.kill('SIGKILL');
    await holder.exited;
    await waitFor(() => new Set(reports([other], 'done').map((r) => r.id)).size === 6, { timeoutMs: 15_000, message: 'the other process ran all 6' });
  }, 60_000);

  it('run-time limits override the options from the next reserve, wake the workers, and reset restores the options\'', async () => {
    const prefix = uniquePrefix('gc-set');
    const children = [worker(target, prefix, 'gcs', { globalConcurrency: 1 }, { DQ_HOLD_MS: '1000' })];
    await ready(children);
    const admin = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { gcs: {} } });
    await admin.submit.submitMany('gcs', Array.from({ length: 8 }, (_, i) => ({ payload: i })));
    await waitFor(() => reports(children, 'start').length === 1, { timeoutMs: 10_000 });
    await admin.control.setGlobalConcurrency('gcs', 4);
    // The workers wake at once: 4 run before the running one ends (it holds 1 s), not as it ends.
    await waitFor(() => reports(children, 'start').length >= 4, { timeoutMs: 5000, intervalMs: 10, message: 'raised concurrency used' });
    expect(reports(children, 'done')).toEqual([]);
    expect(await admin.control.getLimits('gcs')).toMatchObject({ globalConcurrency: { configured: 1, override: 4, effective: 4 } });
    await admin.control.setRateLimit('gcs', { max: 1, perMs: 60_000, burst: 0 });
    expect((await admin.control.getLimits('gcs')).rateLimit).toMatchObject({ configured: null, effective: { max: 1, perMs: 60_000, burst: 0 } });
    await admin.control.setRateLimit('gcs', null);
    await admin.control.resetLimits('gcs');
    expect(await admin.control.getLimits('gcs')).toMatchObject({ globalConcurrency: { configured: 1, override: undefined, effective: 1 }, rateLimit: { effective: null } });
    await waitFor(() => reports(children, 'done').length === 8, { timeoutMs: 20_000 });
  }, 60_000);

  it('a handler throwing RateLimitedError: the task goes back, no attempt spent, and the fleet starts nothing of the type meanwhile', async () => {
    const prefix = uniquePrefix('limited');
    const starts: { id: string; attempt: number; at: number }[] = [];
    let thrownAt = 0;
    const W = workerClass('lim', { concurrency: 3, pollIntervalMs: 100 }, (t: Task) => {
      starts.push({ id: t.id, attempt: t.attempt, at: Date.now() });
      if (t.id === 'x' && thrownAt === 0) {
        thrownAt = Date.now();
        throw new RateLimitedError(800);
      }
    });
    const a = await start({ connection: target.connection, keyPrefix: prefix }, [W]);
    await start({ connection: target.connection, keyPrefix: prefix }, [W]);
    await a.submit.submit('lim', {}, { id: 'x' });
    await waitFor(() => thrownAt > 0, { timeoutMs: 5000, message: 'x was rate-limited' });
    await a.submit.submitMany('lim', Array.from({ length: 6 }, (_, i) => ({ id: `y${i}`, payload: i })));
    const limitedUntil = (await a.control.getLimits('lim')).limitedUntil;
    expect(limitedUntil).not.toBeNull();
    await waitFor(() => new Set(starts.map((s) => s.id)).size === 7, { timeoutMs: 10_000, message: 'all 7 ran' });
    const after = starts.filter((s) => s.at > thrownAt);
    // Nothing started in the pause (a little less than 800 ms: the pause counts from Redis's time of the call).
    expect(Math.min(...after.map((s) => s.at)) - thrownAt).toBeGreaterThanOrEqual(700);
    expect(starts.filter((s) => s.id === 'x').map((s) => s.attempt)).toEqual([1, 1]);
    expect((await a.control.getLimits('lim')).limitedUntil).toBeNull();
  }, 30_000);

  it('bad values are typed errors naming the field; nothing is written', async () => {
    const prefix = uniquePrefix('limits-bad');
    for (const [options, option] of [
      [{ rateLimit: { max: 0, perMs: 1000 } }, 'rateLimit.max'],
      [{ rateLimit: { max: 10 } }, 'rateLimit.perMs'],
      [{ rateLimit: { max: 10, perMs: 1000, burst: 11 } }, 'rateLimit.burst'],
      [{ rateLimit: { max: 10, perMs: 1000, every: 1 } }, 'rateLimit.every'],
      [{ globalConcurrency: 0 }, 'globalConcurrency'],
    ] as const) {
      const error = await startQueueApp({ connection: target.connection, keyPrefix: prefix, types: { bad: options as never }, workers: false }).then((a) => a.close(), (e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidOptionsError);
      expect((error as InvalidOptionsError).option).toBe(`types.bad.${option}`);
    }
    const ordered = await startQueueApp({
      connection: target.connection, keyPrefix: prefix, route: routeTestOptions(prefix, 'm', 2),
    }, [workerClass('ord', { ordered: true, globalConcurrency: 2 }, () => undefined)]).then((a) => a.close(), (e: unknown) => e);
    expect(ordered).toBeInstanceOf(InvalidOptionsError);
    expect((ordered as InvalidOptionsError).option).toBe('globalConcurrency');
    // A start-up that failed on a worker's options leaves no connection behind (Nest closes nothing then).
    if (typeof target.connection === 'string') {
      const redis = connect(target) as Redis;
      try {
        await waitFor(async () => !String(await redis.client('LIST')).includes(`name=dq:${prefix}:`), { timeoutMs: 3000, message: 'connections of the failed start closed' });
      } finally {
        redis.disconnect();
      }
    }
    const admin = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { ok: {}, o: { ordered: true } }, route: routeTestOptions(prefix, 'm', 2) });
    for (const [call, argument] of [
      [() => admin.control.setRateLimit('ok', { max: 5, perMs: 0 }), 'limit.perMs'],
      [() => admin.control.setRateLimit('ok', 'fast' as never), 'limit'],
      [() => admin.control.setGlobalConcurrency('ok', 1.5), 'n'],
      [() => admin.control.setGlobalConcurrency('o', 2), 'type'],
    ] as const) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe(argument);
    }
    expect(await admin.control.getLimits('ok')).toEqual({
      rateLimit: { configured: null, override: undefined, effective: null }, globalConcurrency: { configured: null, override: undefined, effective: null }, running: 0, limitedUntil: null,
    });
  }, 60_000);
});

describe('a configured limit when Redis comes back empty', () => {
  afterEach(() => killAllChildren());

  it('is written again by the running workers within a lease-renewal period, and holds', async () => {
    const server = await startRedisServer({ extraArgs: ['--save', '', '--appendonly', 'no'] });
    const target: RedisTarget = { name: 'single', connection: server.url };
    const prefix = uniquePrefix('limits-lost');
    let admin: QueueApp | undefined;
    try {
      const child = worker(target, prefix, 'rr', { globalConcurrency: 2 }, { DQ_HOLD_MS: '50', DQ_VISIBILITY_MS: '1500' });
      await ready([child]);
      admin = await startQueueApp({ connection: server.url, keyPrefix: prefix, workers: false, types: { rr: {} } });
      expect((await admin.control.getLimits('rr')).globalConcurrency.configured).toBe(2);
      await server.restart();
      const configured = async (): Promise<boolean> => (await admin!.control.getLimits('rr').catch(() => null))?.globalConcurrency.configured === 2;
      await waitFor(configured, { timeoutMs: 10_000, message: 'the limit written again' });
      await admin.submit.submitMany('rr', Array.from({ length: 20 }, (_, i) => ({ payload: i })));
      await waitFor(() => reports([child], 'done').length >= 20, { timeoutMs: 15_000, message: '20 done' });
      expect(mostAtOnce([child])).toBe(2);
    } finally {
      await admin?.close();
      await server.remove();
    }
  }, 60_000);
});

afterAll(() => killAllChildren());
