/**
 * Conformance: deadlines, `expireAt` / `ttlMs` on submit (README "Deadlines"), through the public services
 * only (every engine).
 *
 * Pins down:
 * - getTask shows `expireAt` (submit time + ttlMs; expireAt as given); a task with a deadline that runs in time
 *   is done;
 * - a task not started by its deadline (the type paused past it; also with a priority and in a group; delayed
 *   with expireAt after runAt) never runs: it is dead with TaskExpiredError
 *   (`not started by its deadline (<expireAt>)`, attempts 0, no stack), counted dead, listed by listDead
 *   (`{ id, type, diedAt, payload, error }`);
 * - a retry that falls due after the deadline is not started: dead with TaskExpiredError, its attempts kept;
 *   a retry before it runs;
 * - a waiter (submitAndWait) gets TaskDeadError (`type`, `id`, `error` the TaskExpiredError's info);
 * - redriveDead clears the deadline (no expireAt): the task runs, however late;
 * - bad input: both options, expireAt not after runAt, ttlMs not above delay, values that are not times:
 *   InvalidSubmitOptionsError naming the option (submit and submitMany), nothing written; ordered types refuse
 *   the options.
 *
 * NOTE: submitAndWait subscribes before it submits: the waiter's case reads the task until it exists (bounded,
 * `until`); the memory engine has it at once.
 */
import { InvalidSubmitOptionsError, TaskDeadError, type Task } from 'nestjs-distributed-queue';
import { workerClass } from '../support/queue-app';
import { describeEngines, rejectionOf, type EngineOptions, until } from './engine';

interface Job {
  /** Fail every attempt. */
  fail?: boolean;
}

const runs: { id: string; attempt: number }[] = [];

const Worker = workerClass<Job>('dl', { concurrency: 4, maxAttempts: 3, backoff: { type: 'fixed', delayMs: 1000, jitter: 0 } }, (task: Task<Job>) => {
  runs.push({ id: task.id, attempt: task.attempt });
  if (task.payload?.fail) throw new Error(`failed ${task.id} ${task.attempt}`);
  return undefined;
});
const Ordered = workerClass('dlo', { ordered: true }, () => undefined);
const ROUTE: EngineOptions = { route: { qId: 'cfd', partitions: 2 } };

const expired = (expireAt: number) => ({ name: 'TaskExpiredError', message: `not started by its deadline (${expireAt})`, attempts: 0, failedAt: expect.any(Number) });

describeEngines('deadlines', (start) => {
  afterEach(() => {
    runs.length = 0;
  });

  it('a task not started by its deadline never runs: dead with TaskExpiredError, counted, listed by listDead', async () => {
    const engine = await start({}, [Worker]);
    await engine.control.pause('dl');
    await engine.submit.submit('dl', 'late', { id: 'late', ttlMs: 200 });
    await engine.submit.submit('dl', 'fine', { id: 'fine', ttlMs: 60_000 });
    await engine.submit.submit('dl', 'prio', { id: 'prio', ttlMs: 200, priority: 5 });
    await engine.submit.submit('dl', 'grouped', { id: 'grouped', ttlMs: 200, group: 'tenant' });
    const late = await engine.inspect.getTask('dl', 'late');
    expect(late).toEqual({ id: 'late', type: 'dl', state: 'ready', attempts: 0, dueAt: expect.any(Number), payload: 'late', expireAt: late.dueAt! + 200 });
    const fine = await engine.inspect.getTask('dl', 'fine');
    expect(fine.expireAt).toBe(fine.dueAt! + 60_000);
    expect((await engine.inspect.getTask('dl', 'prio')).expireAt).toEqual(expect.any(Number));

    await engine.advance(300);
    // still ready while nothing would start it (the type paused)
    expect(await engine.inspect.getState('dl', 'late')).toBe('ready');
    await engine.control.resume('dl');
    await engine.settle(['dl']);
    expect(runs).toEqual([{ id: 'fine', attempt: 1 }]);
    expect(await engine.inspect.getState('dl', 'fine')).toBe('done');
    expect(await engine.inspect.getCounts('dl')).toEqual({ delayed: 0, ready: 0, running: 0, dead: 3, done: 1 });
    const dead = await engine.inspect.getTask('dl', 'late');
    expect(dead).toMatchObject({ id: 'late', type: 'dl', state: 'dead', attempts: 0, payload: 'late', lastError: expired(late.expireAt!) });
    expect(dead.lastError!.stack).toBeUndefined();
    const prio = await engine.inspect.getTask('dl', 'prio');
    expect(prio).toMatchObject({ state: 'dead', attempts: 0, lastError: expired(prio.expireAt!) });
    const grouped = await engine.inspect.getTask('dl', 'grouped');
    expect(grouped).toMatchObject({ state: 'dead', attempts: 0, lastError: expired(grouped.expireAt!) });

    const listed = await engine.inspect.listDead('dl');
    const byId = [...listed.tasks].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect({ total: listed.total, tasks: byId }).toEqual({
      total: 3,
      tasks: [
        { id: 'grouped', type: 'dl', diedAt: expect.any(Number), payload: 'grouped', error: expired(grouped.expireAt!) },
        { id: 'late', type: 'dl', diedAt: expect.any(Number), payload: 'late', error: expired(late.expireAt!) },
        { id: 'prio', type: 'dl', diedAt: expect.any(Number), payload: 'prio', error: expired(prio.expireAt!) },
      ],
    });
    for (const t of listed.tasks) {
      expect(t.diedAt).toBe(t.error.failedAt);
      expect(t.diedAt).toBeGreaterThanOrEqual(late.expireAt!);
    }
    // listDead's order: by the time they died, deaths in the same millisecond by id. On Redis 'late' and
    // 'grouped' are buried by one reserve (the group '' and the group 'tenant' take their turns), 'prio' by the
    // next one (its turn in the group '' comes after 'fine'), in that millisecond or later.
    expect(listed.tasks.map((t) => t.id)).toEqual(['grouped', 'late', 'prio']);
  });

  it('delayed, with expireAt after runAt: it runs when due before its deadline, else it is buried when a worker would start it', async () => {
    const engine = await start({}, [Worker]);
    await engine.control.pause('dl');
    await engine.submit.submit('dl', 0, { id: 'clock' });
    const now = (await engine.inspect.getTask('dl', 'clock')).dueAt!;
    // NOTE: Redis: due 500 ms on, a margin for the calls below on a loaded machine before they fall due
    await engine.submit.submit('dl', 1, { id: 'in-time', runAt: now + 500, expireAt: new Date(now + 60_000) });
    await engine.submit.submit('dl', 2, { id: 'too-late', runAt: now + 500, expireAt: now + 800 });
    await engine.submit.submit('dl', 3, { id: 'ttl', delay: 500, ttlMs: 800 });
    expect(await engine.inspect.getTask('dl', 'in-time')).toEqual({ id: 'in-time', type: 'dl', state: 'delayed', attempts: 0, dueAt: now + 500, payload: 1, expireAt: now + 60_000 });
    expect(await engine.inspect.getTask('dl', 'too-late')).toMatchObject({ state: 'delayed', dueAt: now + 500, expireAt: now + 800 });
    const ttl = await engine.inspect.getTask('dl', 'ttl');
    expect(ttl.expireAt! - ttl.dueAt!).toBe(300);

    await engine.advance(1000);
    await engine.control.resume('dl');
    await engine.settle(['dl']);
    expect(runs.map((r) => r.id).sort()).toEqual(['clock', 'in-time']);
    expect(await engine.inspect.getTask('dl', 'too-late')).toMatchObject({ state: 'dead', attempts: 0, lastError: expired(now + 800) });
    expect(await engine.inspect.getTask('dl', 'ttl')).toMatchObject({ state: 'dead', attempts: 0, lastError: expired(ttl.expireAt!) });
  });

  it('a retry due before the deadline runs; the first one due after it is not started: dead with TaskExpiredError, attempts kept', async () => {
    const engine = await start({}, [Worker]);
    // backoff 1 s: attempt 2 is due at about 1,000 (before 1,800), attempt 3 at 2,000 or later (after); on Redis,
    // 1 s of margin for settle and the read before attempt 2 falls due
    await engine.submit.submit('dl', { fail: true }, { id: 'r', ttlMs: 1800 });
    await engine.settle(['dl']);
    const first = await engine.inspect.getTask('dl', 'r');
    expect(first).toMatchObject({ state: 'delayed', attempts: 1, lastError: { message: 'failed r 1', attempts: 1 } });
    expect(first.expireAt).toEqual(expect.any(Number));
    await engine.advance(1000);
    expect(await engine.inspect.getTask('dl', 'r')).toMatchObject({ state: 'delayed', attempts: 2, lastError: { message: 'failed r 2', attempts: 2 } });
    await engine.advance(1000);
    expect(runs).toEqual([{ id: 'r', attempt: 1 }, { id: 'r', attempt: 2 }]);
    const dead = await engine.inspect.getTask('dl', 'r');
    expect(dead).toMatchObject({ state: 'dead', attempts: 2, expireAt: first.expireAt, lastError: expired(first.expireAt!) });
    expect(await engine.inspect.getCounts('dl')).toEqual({ delayed: 0, ready: 0, running: 0, dead: 1, done: 0 });
  });

  it('a waiter gets TaskDeadError naming TaskExpiredError; redriveDead clears the deadline and the task runs', async () => {
    const engine = await start({}, [Worker]);
    await engine.control.pause('dl');
    const waiting = rejectionOf(engine.submit.submitAndWait('dl', 'w', { id: 'w1', ttlMs: 200, timeoutMs: 10_000 }));
    // (the waiter subscribes, then submits)
    const { expireAt } = await until(async () => {
      const task = await engine.inspect.getTask('dl', 'w1');
      return task.state === 'ready' ? task : null;
    }, 'w1 submitted');
    expect(expireAt).toEqual(expect.any(Number));
    await engine.advance(300);
    await engine.control.resume('dl');
    await engine.settle(['dl']);
    const error = await waiting;
    expect(error).toBeInstanceOf(TaskDeadError);
    expect(error).toMatchObject({ type: 'dl', id: 'w1', error: { name: 'TaskExpiredError', message: `not started by its deadline (${expireAt})` } });
    expect(runs).toEqual([]);

    await engine.control.pause('dl');
    expect(await engine.inspect.redriveDead('dl', ['w1'])).toBe(1);
    expect(await engine.inspect.getTask('dl', 'w1')).toEqual({ id: 'w1', type: 'dl', state: 'ready', attempts: 0, dueAt: expect.any(Number), payload: 'w' });
    // long past the old deadline, it still runs
    await engine.advance(300);
    await engine.control.resume('dl');
    await engine.settle(['dl']);
    expect(runs).toEqual([{ id: 'w1', attempt: 1 }]);
    expect(await engine.inspect.getState('dl', 'w1')).toBe('done');
  });

  it('bad deadlines are InvalidSubmitOptionsError naming the option, nothing written; ordered types refuse them', async () => {
    const engine = await start(ROUTE, [Worker, Ordered]);
    await engine.control.pause('dl');
    await engine.submit.submit('dl', 0, { id: 'clock' });
    const now = (await engine.inspect.getTask('dl', 'clock')).dueAt!;
    const cases: [object, string][] = [
      [{ expireAt: now + 1000, ttlMs: 1000 }, 'ttlMs'],
      [{ runAt: now + 1000, expireAt: now + 500 }, 'expireAt'],
      [{ runAt: now + 1000, expireAt: now + 1000 }, 'expireAt'],
      [{ delay: 1000, ttlMs: 1000 }, 'ttlMs'],
      [{ delay: 1000, ttlMs: 999 }, 'ttlMs'],
      [{ ttlMs: 0 }, 'ttlMs'],
      [{ ttlMs: -5 }, 'ttlMs'],
      [{ ttlMs: '1000' }, 'ttlMs'],
      [{ ttlMs: Infinity }, 'ttlMs'],
      [{ expireAt: 'tomorrow' }, 'expireAt'],
      [{ expireAt: new Date('x') }, 'expireAt'],
    ];
    for (const [options, option] of cases) {
      const single = await rejectionOf(engine.submit.submit('dl', {}, { id: 'bad', ...options }));
      expect([options, single]).toEqual([options, expect.any(InvalidSubmitOptionsError)]);
      expect([options, (single as InvalidSubmitOptionsError).option]).toEqual([options, option]);
      const many = await rejectionOf(engine.submit.submitMany('dl', [{ id: 'ok', payload: {} }, { id: 'bad', payload: {}, ...options }]));
      expect([options, many]).toEqual([options, expect.any(InvalidSubmitOptionsError)]);
    }
    expect(await engine.inspect.getState('dl', 'bad')).toBe('unknown');
    expect(await engine.inspect.getState('dl', 'ok')).toBe('unknown');
    expect(await engine.inspect.getCounts('dl')).toEqual({ delayed: 0, ready: 1, running: 0, dead: 0, done: 0 });
    // a deadline in the past is a deadline all the same: the task is buried, never run
    await engine.submit.submit('dl', 'past', { id: 'past', expireAt: now - 1 });
    await engine.control.resume('dl');
    await engine.settle(['dl']);
    expect(await engine.inspect.getTask('dl', 'past')).toMatchObject({ state: 'dead', lastError: expired(now - 1) });
    expect(runs.map((r) => r.id)).toEqual(['clock']);

    for (const options of [{ ttlMs: 1000 }, { expireAt: now + 60_000 }]) {
      const ordered = await rejectionOf(engine.submit.submitOrdered('dlo', 'k', {}, options as never));
      expect([options, ordered]).toEqual([options, expect.any(InvalidSubmitOptionsError)]);
    }
  });
});
