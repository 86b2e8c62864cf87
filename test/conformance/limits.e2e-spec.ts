/**
 * Conformance: fleet-wide limits of a delay-queue type (README "Rate limits and fleet-wide concurrency"):
 * the worker options `rateLimit` and `globalConcurrency`, QueueControlService's setRateLimit /
 * setGlobalConcurrency / resetLimits / getLimits, and a handler's RateLimitedError (every engine).
 *
 * Pins down:
 * - rateLimit (GCRA): of 6 due tasks, 1 + burst start at once and no more while the rate holds them back;
 *   setRateLimit overrides it (getLimits: configured, override, effective) and starts afresh; resetLimits puts
 *   the options' limit back, afresh too (1 + burst start at once again); `null` lifts it;
 * - globalConcurrency: at most N of the type hold a lease at once (getLimits.running), whatever the worker's
 *   concurrency; setGlobalConcurrency overrides it (a lower and a lifted one), resetLimits puts it back;
 * - getLimits of a type without limits: both null, running 0, limitedUntil null;
 * - RateLimitedError thrown by a handler: the task goes back (ready, attempts 0, no lastError, its due time
 *   kept), no attempt spent (it runs again as attempt 1 once the pause is over); getLimits.limitedUntil says
 *   until when; a later, shorter pause does not shorten it;
 * - bad input: InvalidArgumentError naming the field ('limit.max', 'limit.perMs', 'limit.burst', 'n'); ordered
 *   types refuse the calls ('type') and the options (InvalidOptionsError at start); unknown types
 *   (UnknownTaskTypeError).
 *
 * NOTE (why no case counts starts across `advance`): on Redis, `settle` (and `advance`, which settles) returns
 * only once no task of the type is ready, so tasks that a rate limit holds back are waited for in real time:
 * with max 2 per 1000 ms and burst 0, `settle` on Redis returns after all 6 of 6 due tasks started (about
 * 2.5 s), where the memory engine's clock stands still and 1 has started. The counts below are exact on both
 * engines instead: the limits hold the rest back far longer than a case lasts (perMs 60 s), the handlers hold
 * their tasks (a gate) until the case has counted the starts, and the type is paused before `settle` so that
 * `settle` waits only for the running tasks. A handler's RateLimitedError is recorded by a call or two after
 * its throw on Redis (the fleet-wide pause, then the hand-back): a case that must see one before going on reads
 * getLimits / getState until it shows (bounded, `until`); the memory engine shows it at once.
 */
import {
  InvalidArgumentError, InvalidOptionsError, RateLimitedError, UnknownTaskTypeError, type Task,
} from 'nestjs-distributed-queue';
import { workerClass } from '../support/queue-app';
import { deferred, describeEngines, rejectionOf, type Deferred, type Engine, type EngineOptions, until } from './engine';

interface Job {
  /** Throws RateLimitedError(retryAfterMs) on its first run. */
  limited?: number;
  /** The gate it waits on before throwing (a rate-limited task's own). */
  gate?: 'a' | 'b';
}

const starts: { id: string; attempt: number }[] = [];
let active = 0;
let mostActive = 0;
let gate = deferred();
const gates = new Map<string, Deferred>();
const startedOf = new Map<string, Deferred>();
let reached = deferred();
let startsWanted = Infinity;

const startedFor = (id: string): Deferred => {
  if (!startedOf.has(id)) startedOf.set(id, deferred());
  return startedOf.get(id)!;
};
const gateFor = (name: string): Deferred => {
  if (!gates.has(name)) gates.set(name, deferred());
  return gates.get(name)!;
};

/** Records the start and holds the task on the gate. */
const held = async (task: Task<Job>): Promise<void> => {
  starts.push({ id: task.id, attempt: task.attempt });
  active++;
  mostActive = Math.max(mostActive, active);
  if (starts.length >= startsWanted) reached.resolve();
  try {
    await gate.promise;
  } finally {
    active--;
  }
};

const Rated = workerClass<Job>('rl', { concurrency: 6, maxAttempts: 1, rateLimit: { max: 2, perMs: 60_000, burst: 1 } }, held);
const OnePerMinute = workerClass<Job>('one', { concurrency: 6, maxAttempts: 1, rateLimit: { max: 1, perMs: 60_000 } }, held);
const Bounded = workerClass<Job>('gcw', { concurrency: 4, maxAttempts: 1, globalConcurrency: 2 }, held);
const Plain = workerClass<Job>('free', { concurrency: 1 }, () => undefined);
const runs = new Map<string, number>();
const Limited = workerClass<Job>('lim', { concurrency: 2, maxAttempts: 3 }, async (task: Task<Job>) => {
  starts.push({ id: task.id, attempt: task.attempt });
  const run = (runs.get(task.id) ?? 0) + 1;
  runs.set(task.id, run);
  startedFor(task.id).resolve();
  const { limited, gate: own } = task.payload;
  if (own) await gateFor(own).promise;
  if (limited !== undefined && run === 1) throw new RateLimitedError(limited);
});
const Ordered = workerClass('ord', { ordered: true }, () => undefined);
const ROUTE: EngineOptions = { route: { qId: 'cfl', partitions: 2 } };

const ids = (prefix: string) => Array.from({ length: 6 }, (_, i) => ({ id: `${prefix}${i}`, payload: {} }));

/** Resolves once `starts` holds `n` starts in all (on Redis tasks start on their own, maybe before this call). */
function startsReach(n: number): Promise<void> {
  reached = deferred();
  startsWanted = n;
  if (starts.length >= n) reached.resolve();
  return reached.promise;
}

/**
 * Lets the type's due tasks start until `n` started in all (their handlers hold), pauses the type, opens the
 * gate and settles: what started is what the limits let through, nothing more can start meanwhile.
 */
async function runUntil(engine: Engine, type: string, n: number): Promise<void> {
  const settled = engine.settle([type]);
  await startsReach(n);
  await engine.control.pause(type);
  gate.resolve();
  await settled;
  gate = deferred();
}

describeEngines('limits', (start) => {
  afterEach(() => {
    gate.resolve();
    for (const g of gates.values()) g.resolve();
    gates.clear();
    startedOf.clear();
    runs.clear();
    starts.length = 0;
    active = 0;
    mostActive = 0;
    gate = deferred();
    reached = deferred();
    startsWanted = Infinity;
  });

  it('rateLimit: of 6 due tasks 1 + burst start at once; an override starts afresh; resetLimits puts the options back', async () => {
    const engine = await start({}, [Rated]);
    const configured = { max: 2, perMs: 60_000, burst: 1 };
    await engine.control.pause('rl');
    await engine.submit.submitMany('rl', ids('r'));
    await engine.control.resume('rl');
    await runUntil(engine, 'rl', 2);
    expect(starts.map((s) => s.id)).toEqual(['r0', 'r1']);
    expect(await engine.inspect.getCounts('rl')).toEqual({ delayed: 0, ready: 4, running: 0, dead: 0, done: 2 });
    expect(await engine.control.getLimits('rl')).toEqual({
      rateLimit: { configured, effective: configured }, globalConcurrency: { configured: null, effective: null }, running: 0, limitedUntil: null,
    });

    // an override, fresh: its burst of 10 lets the 4 waiting ones in at once
    await engine.control.setRateLimit('rl', { max: 100, perMs: 1000, burst: 10 });
    expect((await engine.control.getLimits('rl')).rateLimit).toEqual({ configured, override: { max: 100, perMs: 1000, burst: 10 }, effective: { max: 100, perMs: 1000, burst: 10 } });
    await engine.control.resume('rl');
    await runUntil(engine, 'rl', 6);
    expect(starts.map((s) => s.id)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
    // the burst's default: floor(max / 50)
    await engine.control.setRateLimit('rl', { max: 120, perMs: 1000 });
    expect((await engine.control.getLimits('rl')).rateLimit.effective).toEqual({ max: 120, perMs: 1000, burst: 2 });

    // back to the options' limit, afresh: 1 + burst again, not the debt of the first two
    await engine.control.resetLimits('rl');
    expect((await engine.control.getLimits('rl')).rateLimit).toEqual({ configured, effective: configured });
    await engine.submit.submitMany('rl', ids('s'));
    await engine.control.resume('rl');
    await runUntil(engine, 'rl', 8);
    expect(starts.slice(6).map((s) => s.id)).toEqual(['s0', 's1']);
    expect(await engine.inspect.getCounts('rl')).toMatchObject({ ready: 4, running: 0, done: 8 });

    // null: no limit, whatever the options say
    await engine.control.setRateLimit('rl', null);
    expect((await engine.control.getLimits('rl')).rateLimit).toEqual({ configured, override: null, effective: null });
    await engine.control.resume('rl');
    await runUntil(engine, 'rl', 12);
    expect(await engine.inspect.getCounts('rl')).toMatchObject({ ready: 0, running: 0, done: 12 });
  });

  it("rateLimit { max: 1 } without a burst: one start a window, as BullMQ's limiter of max 1 (the default burst is floor(max / 50): none under 50)", async () => {
    const engine = await start({}, [OnePerMinute]);
    await engine.control.pause('one');
    await engine.submit.submitMany('one', ids('o').slice(0, 3));
    await engine.control.resume('one');
    await runUntil(engine, 'one', 1);
    expect(starts.map((s) => s.id)).toEqual(['o0']);
    expect(await engine.inspect.getCounts('one')).toMatchObject({ ready: 2, done: 1 });
    expect((await engine.control.getLimits('one')).rateLimit.effective).toEqual({ max: 1, perMs: 60_000, burst: 0 });
  });

  it('globalConcurrency: at most N hold a lease at once; setGlobalConcurrency lowers or lifts it; resetLimits restores it', async () => {
    const engine = await start({}, [Bounded]);
    await engine.control.pause('gcw');
    await engine.submit.submitMany('gcw', ids('g').slice(0, 5));
    await engine.control.resume('gcw');
    const settled = engine.settle(['gcw']);
    await startsReach(2);
    expect(await engine.control.getLimits('gcw')).toEqual({
      rateLimit: { configured: null, effective: null }, globalConcurrency: { configured: 2, effective: 2 }, running: 2, limitedUntil: null,
    });
    expect(await engine.inspect.getCounts('gcw')).toEqual({ delayed: 0, ready: 3, running: 2, dead: 0, done: 0 });
    expect(starts.map((s) => s.id)).toEqual(['g0', 'g1']);
    gate.resolve();
    await settled;
    expect(starts).toHaveLength(5);
    expect(mostActive).toBe(2);

    // lowered to 1
    gate = deferred();
    mostActive = 0;
    await engine.control.setGlobalConcurrency('gcw', 1);
    expect((await engine.control.getLimits('gcw')).globalConcurrency).toEqual({ configured: 2, override: 1, effective: 1 });
    await engine.control.pause('gcw');
    await engine.submit.submitMany('gcw', ids('h').slice(0, 3));
    await engine.control.resume('gcw');
    const lowered = engine.settle(['gcw']);
    await startsReach(6);
    expect((await engine.control.getLimits('gcw')).running).toBe(1);
    expect(await engine.inspect.getCounts('gcw')).toMatchObject({ ready: 2, running: 1 });
    gate.resolve();
    await lowered;
    expect(mostActive).toBe(1);

    // lifted (null): the worker's concurrency (4) is the bound
    gate = deferred();
    mostActive = 0;
    await engine.control.setGlobalConcurrency('gcw', null);
    expect((await engine.control.getLimits('gcw')).globalConcurrency).toEqual({ configured: 2, override: null, effective: null });
    await engine.control.pause('gcw');
    // NOTE: 4 tasks for 4 slots: with more, a Redis worker may reserve some ahead of its slots (leases too)
    await engine.submit.submitMany('gcw', ids('k').slice(0, 4));
    await engine.control.resume('gcw');
    const lifted = engine.settle(['gcw']);
    await startsReach(12);
    expect((await engine.control.getLimits('gcw')).running).toBe(4);
    gate.resolve();
    await lifted;
    expect(mostActive).toBe(4);

    await engine.control.resetLimits('gcw');
    expect((await engine.control.getLimits('gcw')).globalConcurrency).toEqual({ configured: 2, effective: 2 });
    expect(starts).toHaveLength(12);
  });

  it('getLimits of a type without limits; bad input: InvalidArgumentError naming the field, ordered and unknown types', async () => {
    const engine = await start(ROUTE, [Plain, Ordered]);
    expect(await engine.control.getLimits('free')).toEqual({
      rateLimit: { configured: null, effective: null }, globalConcurrency: { configured: null, effective: null }, running: 0, limitedUntil: null,
    });
    const calls: [() => Promise<unknown>, string][] = [
      [() => engine.control.setRateLimit('free', { max: 0, perMs: 1000 }), 'limit.max'],
      [() => engine.control.setRateLimit('free', { max: 1.5, perMs: 1000 }), 'limit.max'],
      [() => engine.control.setRateLimit('free', { max: 10, perMs: 0 }), 'limit.perMs'],
      [() => engine.control.setRateLimit('free', { max: 10, perMs: 1000, burst: -1 }), 'limit.burst'],
      [() => engine.control.setGlobalConcurrency('free', 0), 'n'],
      [() => engine.control.setGlobalConcurrency('free', 2.5), 'n'],
      [() => engine.control.setRateLimit('ord', { max: 10, perMs: 1000 }), 'type'],
      [() => engine.control.setGlobalConcurrency('ord', 2), 'type'],
      [() => engine.control.resetLimits('ord'), 'type'],
      [() => engine.control.getLimits('ord'), 'type'],
    ];
    for (const [call, argument] of calls) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toMatchObject({ argument });
    }
    expect(await engine.control.getLimits('free')).toMatchObject({ rateLimit: { configured: null, effective: null }, globalConcurrency: { configured: null, effective: null } });
    expect(await rejectionOf(engine.control.setRateLimit('nobody', { max: 1, perMs: 1000 }))).toBeInstanceOf(UnknownTaskTypeError);
    expect(await rejectionOf(engine.control.getLimits('nobody'))).toBeInstanceOf(UnknownTaskTypeError);

    const OrderedRated = workerClass('ord2', { ordered: true, rateLimit: { max: 1, perMs: 1000 } } as never, () => undefined);
    const refused = await rejectionOf(start(ROUTE, [OrderedRated]));
    expect(refused).toBeInstanceOf(InvalidOptionsError);
    expect((refused as InvalidOptionsError).option).toMatch(/rateLimit$/);
    const OrderedBounded = workerClass('ord3', { ordered: true, globalConcurrency: 2 } as never, () => undefined);
    const bounded = await rejectionOf(start(ROUTE, [OrderedBounded]));
    expect(bounded).toBeInstanceOf(InvalidOptionsError);
    expect((bounded as InvalidOptionsError).option).toMatch(/globalConcurrency$/);
  });

  it('RateLimitedError: the task goes back without spending an attempt; limitedUntil; it runs again as attempt 1', async () => {
    const engine = await start({}, [Limited]);
    await engine.submit.submit('lim', { limited: 1000, gate: 'a' }, { id: 'x' });
    const settled = engine.settle(['lim']);
    await startedFor('x').promise;
    await engine.control.pause('lim');
    gateFor('a').resolve();
    await settled;
    const back = await engine.inspect.getTask('lim', 'x');
    expect(back).toEqual({ id: 'x', type: 'lim', state: 'ready', attempts: 0, dueAt: expect.any(Number), payload: { limited: 1000, gate: 'a' } });
    const { limitedUntil } = await engine.control.getLimits('lim');
    // NOTE: Redis: limitedUntil is the handler's throw (Redis clock) + 1000, a few ms after the task's due time
    expect(limitedUntil! - back.dueAt!).toBeGreaterThanOrEqual(1000);
    expect(limitedUntil! - back.dueAt!).toBeLessThan(2000);
    expect(await engine.inspect.getCounts('lim')).toEqual({ delayed: 0, ready: 1, running: 0, dead: 0, done: 0 });

    await engine.control.resume('lim');
    await engine.advance(1000);
    expect(starts).toEqual([{ id: 'x', attempt: 1 }, { id: 'x', attempt: 1 }]);
    expect(await engine.inspect.getTask('lim', 'x')).toEqual({ id: 'x', type: 'lim', state: 'done' });
    expect((await engine.control.getLimits('lim')).limitedUntil).toBeNull();
  });

  it('RateLimitedError: a later, shorter pause does not shorten the one in force', async () => {
    const engine = await start({}, [Limited]);
    await engine.control.pause('lim');
    await engine.submit.submit('lim', { limited: 1000, gate: 'a' }, { id: 'long' });
    await engine.submit.submit('lim', { limited: 100, gate: 'b' }, { id: 'short' });
    await engine.control.resume('lim');
    const settled = engine.settle(['lim']);
    await Promise.all([startedFor('long').promise, startedFor('short').promise]);
    await engine.control.pause('lim');
    gateFor('a').resolve();
    const first = await until(async () => (await engine.control.getLimits('lim')).limitedUntil, 'the first pause written');
    gateFor('b').resolve();
    await until(async () => (await engine.inspect.getState('lim', 'short')) === 'ready', 'the second task handed back');
    await settled;
    expect(await engine.inspect.getCounts('lim')).toEqual({ delayed: 0, ready: 2, running: 0, dead: 0, done: 0 });
    expect((await engine.inspect.getTask('lim', 'short')).attempts).toBe(0);
    const second = (await engine.control.getLimits('lim')).limitedUntil;

    await engine.control.resume('lim');
    await engine.advance(1000);
    expect(starts.map((s) => `${s.id}#${s.attempt}`).sort()).toEqual(['long#1', 'long#1', 'short#1', 'short#1']);
    expect(await engine.inspect.getCounts('lim')).toMatchObject({ ready: 0, done: 2 });
    expect(second).toBe(first);
  });
});
