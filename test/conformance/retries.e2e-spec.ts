/**
 * Conformance: failed attempts, retries, dead letters, timeouts and cancels of running tasks (delay queue).
 *
 * Pins down:
 * - a thrown error fails the attempt; it is retried after the backoff (fixed: `delayMs`; exponential:
 *   `delayMs * 2^(n-1)`; jitter 0), not before, as attempt 2, 3, ... up to maxAttempts; between attempts the
 *   task is `delayed` with `attempts`, `lastError` (name, message, attempts, failedAt, stack) and
 *   `dueAt` = `lastError.failedAt` + the backoff; then it is dead with the last error;
 * - a task that succeeds on a retry is done (the handler saw attempt 2);
 * - listDead: `{ total, tasks }`, oldest death first, each `{ id, type, diedAt, payload, error }`; offset and
 *   limit; thrown values that are not Errors: name 'Error', message String(value), no stack; an Error
 *   subclass keeps its name;
 * - redriveDead: by ids (unknown ones count 0) or all; the task is ready at once with attempts reset
 *   (attempts 0, no lastError) and runs as attempt 1; deleteDead: gone ('unknown'), counted;
 * - timeoutMs: the attempt ends with TaskTimeoutError (`timeoutMs`; message 'Task timed out after N ms'),
 *   the handler's signal aborts with it; a handler declared without a signal that never settles is timed out
 *   the same and frees its slot;
 * - cancel of a running task: 'cancel-requested', its signal aborts with TaskCancelledError (`id`), it is not
 *   retried, dead or done: 'unknown' at once, counted nowhere, its slot free even while its handler goes on.
 */
import { TaskCancelledError, TaskTimeoutError, type Task } from 'nestjs-distributed-queue';
import { untilAborted, workerClass } from '../support/queue-app';
import { deferred, describeEngines } from './engine';

interface Job {
  /** Fail attempts up to this one. */
  failUntil?: number;
  throwValue?: unknown;
  typeError?: boolean;
  /** Fail every attempt until the test sets `healed`. */
  untilHealed?: boolean;
}

const attempts: { id: string; attempt: number }[] = [];
const reasons: unknown[] = [];
let gate = deferred();
let started = deferred();
let healed = false;

const failing = (task: Task<Job>) => {
  attempts.push({ id: task.id, attempt: task.attempt });
  const job = task.payload ?? {};
  if ('throwValue' in job) throw job.throwValue;
  if (job.typeError) throw new TypeError(`typed ${task.id}`);
  if (job.untilHealed && !healed) throw new Error(`not healed ${task.id}`);
  if (task.attempt <= (job.failUntil ?? 0)) throw new Error(`boom ${task.id} ${task.attempt}`);
  return undefined;
};
// NOTE: backoffs of 400 ms: on Redis, real time also passes while `settle` reads the counts (tens of ms, more
// under load), so the check that a retry is not early needs a wide margin.
const Fixed = workerClass<Job>('rt', { concurrency: 1, maxAttempts: 3, backoff: { type: 'fixed', delayMs: 400, jitter: 0 } }, failing);
// NOTE: the "not before its backoff" cell: 1.5 s, so that a loaded machine (a full suite beside it) still reads
// the task before its retry on Redis; 400 ms failed there once (the retry had run by the check).
const FixedLong = workerClass<Job>('rl', { concurrency: 1, maxAttempts: 3, backoff: { type: 'fixed', delayMs: 1500, jitter: 0 } }, failing);
// NOTE: 1 s, then 2 s: 200 ms failed once on the cluster under a loaded full suite (the retry had run by the check).
const Exponential = workerClass<Job>('rx', { concurrency: 1, maxAttempts: 3, backoff: { type: 'exponential', delayMs: 1000, jitter: 0 } }, failing);
const Once = workerClass<Job>('r1', { concurrency: 1, maxAttempts: 1 }, failing);
const Slow = workerClass('slow', { concurrency: 1, timeoutMs: 150, maxAttempts: 1 }, async (task: Task, signal: AbortSignal) => {
  attempts.push({ id: task.id, attempt: task.attempt });
  await untilAborted(signal).catch((reason: unknown) => reasons.push(reason));
});
const Hang = workerClass('hang', { concurrency: 1, timeoutMs: 150, maxAttempts: 1 }, (task: Task) => {
  attempts.push({ id: task.id, attempt: task.attempt });
  return task.id === 'hangs' ? new Promise(() => undefined) : undefined;
});
const Held = workerClass<{ listen: boolean }>('held', { concurrency: 1, maxAttempts: 3 }, async (task: Task<{ listen: boolean }>, signal: AbortSignal) => {
  attempts.push({ id: task.id, attempt: task.attempt });
  if (task.id === 'next') return;
  started.resolve();
  if (task.payload.listen) await untilAborted(signal).catch((reason: unknown) => reasons.push(reason));
  else await gate.promise;
});

describeEngines('retries and dead letters', (start) => {
  afterEach(() => {
    gate.resolve();
    attempts.length = 0;
    reasons.length = 0;
    gate = deferred();
    started = deferred();
    healed = false;
  });

  it('retries after a fixed backoff, not before, up to maxAttempts, then dead-letters with the last error', async () => {
    const engine = await start({}, [FixedLong]);
    await engine.submit.submit('rl', { failUntil: 99 }, { id: 'r' });
    await engine.settle(['rl']);
    const first = await engine.inspect.getTask('rl', 'r');
    expect(first).toEqual({
      id: 'r', type: 'rl', state: 'delayed', attempts: 1, dueAt: expect.any(Number), payload: { failUntil: 99 },
      lastError: { name: 'Error', message: 'boom r 1', attempts: 1, failedAt: expect.any(Number), stack: expect.stringMatching(/^Error: boom r 1\n/) },
    });
    expect(first.dueAt).toBe(first.lastError!.failedAt + 1500);
    await engine.advance(100);
    expect(await engine.inspect.getTask('rl', 'r')).toMatchObject({ state: 'delayed', attempts: 1 });
    await engine.advance(1400);
    const second = await engine.inspect.getTask('rl', 'r');
    expect(second).toMatchObject({ state: 'delayed', attempts: 2, lastError: { message: 'boom r 2', attempts: 2 } });
    expect(second.dueAt).toBe(second.lastError!.failedAt + 1500);
    await engine.advance(1500);
    const dead = await engine.inspect.getTask('rl', 'r');
    expect(dead).toEqual({
      id: 'r', type: 'rl', state: 'dead', attempts: 3, dueAt: second.dueAt, payload: { failUntil: 99 },
      lastError: { name: 'Error', message: 'boom r 3', attempts: 3, failedAt: expect.any(Number), stack: expect.stringMatching(/^Error: boom r 3\n/) },
    });
    expect(attempts).toEqual([{ id: 'r', attempt: 1 }, { id: 'r', attempt: 2 }, { id: 'r', attempt: 3 }]);
    expect(await engine.inspect.getCounts('rl')).toEqual({ delayed: 0, ready: 0, running: 0, dead: 1, done: 0 });
    await engine.advance(500);
    expect(attempts).toHaveLength(3);
  });

  it('a task that succeeds on its retry is done; exponential backoff doubles (jitter 0)', async () => {
    const engine = await start({}, [Fixed, Exponential]);
    await engine.submit.submit('rt', { failUntil: 1 }, { id: 'once' });
    await engine.submit.submit('rx', { failUntil: 99 }, { id: 'exp' });
    await engine.settle(['rt', 'rx']);
    expect(await engine.inspect.getTask('rt', 'once')).toMatchObject({ state: 'delayed', attempts: 1 });
    const exp1 = await engine.inspect.getTask('rx', 'exp');
    expect(exp1).toMatchObject({ state: 'delayed', attempts: 1 });
    expect(exp1.dueAt! - exp1.lastError!.failedAt).toBe(1000);
    await engine.advance(1000);
    const exp2 = await engine.inspect.getTask('rx', 'exp');
    expect(exp2).toMatchObject({ state: 'delayed', attempts: 2 });
    expect(exp2.dueAt! - exp2.lastError!.failedAt).toBe(2000);
    await engine.advance(2500);
    expect(await engine.inspect.getState('rt', 'once')).toBe('done');
    expect(await engine.inspect.getTask('rt', 'once')).toEqual({ id: 'once', type: 'rt', state: 'done' });
    expect(await engine.inspect.getTask('rx', 'exp')).toMatchObject({ state: 'dead', attempts: 3 });
    expect(attempts.filter((a) => a.id === 'once').map((a) => a.attempt)).toEqual([1, 2]);
    expect(attempts.filter((a) => a.id === 'exp').map((a) => a.attempt)).toEqual([1, 2, 3]);
  });

  it('listDead lists dead letters oldest first with their last error; values that are not Errors have no stack', async () => {
    // NOTE: dead letters are ordered by the time they died, then (deaths in the same millisecond, as on a clock
    // that stands still) by id: these ids sort in the order the tasks die (concurrency 1, submission order).
    const engine = await start({}, [Once]);
    await engine.submit.submitMany('r1', [
      { id: 'a-plain', payload: { failUntil: 1 } }, { id: 'b-string', payload: { throwValue: 'plain string' } },
      { id: 'c-object', payload: { throwValue: { code: 42 } } }, { id: 'd-typed', payload: { typeError: true } }, { id: 'e-fine', payload: {} },
    ]);
    await engine.settle(['r1']);
    const { total, tasks } = await engine.inspect.listDead('r1');
    expect(total).toBe(4);
    expect(tasks).toEqual([
      { id: 'a-plain', type: 'r1', diedAt: expect.any(Number), payload: { failUntil: 1 }, error: { name: 'Error', message: 'boom a-plain 1', attempts: 1, failedAt: expect.any(Number), stack: expect.stringMatching(/^Error: boom a-plain 1\n/) } },
      { id: 'b-string', type: 'r1', diedAt: expect.any(Number), payload: { throwValue: 'plain string' }, error: { name: 'Error', message: 'plain string', attempts: 1, failedAt: expect.any(Number) } },
      { id: 'c-object', type: 'r1', diedAt: expect.any(Number), payload: { throwValue: { code: 42 } }, error: { name: 'Error', message: '[object Object]', attempts: 1, failedAt: expect.any(Number) } },
      { id: 'd-typed', type: 'r1', diedAt: expect.any(Number), payload: { typeError: true }, error: { name: 'TypeError', message: 'typed d-typed', attempts: 1, failedAt: expect.any(Number), stack: expect.stringMatching(/^TypeError: typed d-typed\n/) } },
    ]);
    for (const t of tasks) expect(t.diedAt).toBe(t.error.failedAt);
    expect(tasks.map((t) => t.diedAt)).toEqual([...tasks.map((t) => t.diedAt)].sort((a, b) => a - b));
    expect((await engine.inspect.listDead('r1', 1, 2)).tasks.map((t) => t.id)).toEqual(['b-string', 'c-object']);
    expect(await engine.inspect.listDead('r1', 10)).toEqual({ total: 4, tasks: [] });
    expect((await engine.inspect.listTasks('r1', 'dead')).map((t) => t.id)).toEqual(['a-plain', 'b-string', 'c-object', 'd-typed']);
    expect(await engine.inspect.getState('r1', 'e-fine')).toBe('done');
  });

  it('redriveDead runs dead letters again from attempt 1 (by ids or all); deleteDead removes them', async () => {
    const engine = await start({}, [Fixed, Once]);
    await engine.submit.submitMany('r1', ['a', 'b', 'c', 'd'].map((id) => ({ id, payload: { failUntil: 1 } })));
    await engine.settle(['r1']);
    expect((await engine.inspect.listDead('r1')).total).toBe(4);
    await engine.control.pause('r1');
    expect(await engine.inspect.redriveDead('r1', ['c', 'ghost'])).toBe(1);
    expect(await engine.inspect.getTask('r1', 'c')).toEqual({ id: 'c', type: 'r1', state: 'ready', attempts: 0, dueAt: expect.any(Number), payload: { failUntil: 1 } });
    await engine.advance(10); // the next re-drives are due later than c's
    expect(await engine.inspect.deleteDead('r1', ['d', 'ghost'])).toBe(1);
    expect(await engine.inspect.getState('r1', 'd')).toBe('unknown');
    expect(await engine.inspect.deleteDead('r1', ['d'])).toBe(0);
    expect(await engine.inspect.redriveDead('r1')).toBe(2);
    expect(await engine.inspect.getCounts('r1')).toEqual({ delayed: 0, ready: 3, running: 0, dead: 0, done: 0 });
    expect(await engine.inspect.redriveDead('r1')).toBe(0);
    attempts.length = 0;
    await engine.control.resume('r1');
    await engine.settle(['r1']);
    // Each ran again as attempt 1 (and died again: maxAttempts 1). A re-drive makes a task due at once: c,
    // re-driven 10 ms before the others, is due first; a and b, re-driven together, run in submission order.
    expect(attempts).toEqual([{ id: 'c', attempt: 1 }, { id: 'a', attempt: 1 }, { id: 'b', attempt: 1 }]);
    // (not their order in listDead: deaths in the same millisecond are listed by id)
    expect((await engine.inspect.listDead('r1')).tasks.map((t) => [t.id, t.error.attempts]).sort()).toEqual([['a', 1], ['b', 1], ['c', 1]]);
    // a retried type: re-driven, the dead letter gets its maxAttempts again
    await engine.submit.submit('rt', { untilHealed: true }, { id: 'x' });
    await engine.settle(['rt']);
    await engine.advance(400);
    await engine.advance(400);
    expect(await engine.inspect.getTask('rt', 'x')).toMatchObject({ state: 'dead', attempts: 3 });
    healed = true;
    expect(await engine.inspect.redriveDead('rt', ['x'])).toBe(1);
    await engine.settle(['rt']);
    expect(await engine.inspect.getState('rt', 'x')).toBe('done');
    expect(attempts.filter((a) => a.id === 'x').map((a) => a.attempt)).toEqual([1, 2, 3, 1]);
  });

  it('timeoutMs ends the attempt with TaskTimeoutError and aborts the handler\'s signal with it', async () => {
    const engine = await start({}, [Slow]);
    await engine.submit.submit('slow', {}, { id: 't1' });
    await engine.advance(200);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(TaskTimeoutError);
    expect(reasons[0]).toMatchObject({ name: 'TaskTimeoutError', timeoutMs: 150, message: 'Task timed out after 150 ms' });
    expect(await engine.inspect.getTask('slow', 't1')).toMatchObject({
      state: 'dead', attempts: 1, lastError: { name: 'TaskTimeoutError', message: 'Task timed out after 150 ms', attempts: 1 },
    });
  });

  it('a handler declared without a signal that never settles is timed out all the same, and frees its slot', async () => {
    const engine = await start({}, [Hang]);
    await engine.submit.submit('hang', {}, { id: 'hangs' });
    await engine.submit.submit('hang', {}, { id: 'next' });
    await engine.advance(200);
    expect(attempts.map((a) => a.id)).toEqual(['hangs', 'next']);
    expect(await engine.inspect.getState('hang', 'next')).toBe('done');
    expect((await engine.inspect.getTask('hang', 'hangs')).lastError).toMatchObject({ name: 'TaskTimeoutError', attempts: 1 });
  });

  it('cancel of a running task: cancel-requested, its signal aborts with TaskCancelledError, it is gone and not retried', async () => {
    const engine = await start({}, [Held]);
    await engine.submit.submit('held', { listen: true }, { id: 'running' });
    const settled = engine.settle(['held']);
    await started.promise;
    expect(await engine.submit.cancel('held', 'running')).toBe('cancel-requested');
    await settled;
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(TaskCancelledError);
    expect(reasons[0]).toMatchObject({ name: 'TaskCancelledError', id: 'running' });
    expect(await engine.inspect.getTask('held', 'running')).toEqual({ id: 'running', type: 'held', state: 'unknown' });
    expect(await engine.inspect.getCounts('held')).toEqual({ delayed: 0, ready: 0, running: 0, dead: 0, done: 0 });
    expect(await engine.submit.cancel('held', 'running')).toBe('not-found');
    await engine.advance(300);
    expect(attempts).toEqual([{ id: 'running', attempt: 1 }]);
  });

  it('cancel of a running task whose handler ignores its signal: the attempt ends at once, the slot is free', async () => {
    const engine = await start({}, [Held]);
    await engine.submit.submit('held', { listen: false }, { id: 'deaf' });
    const settled = engine.settle(['held']);
    await started.promise;
    expect(await engine.submit.cancel('held', 'deaf')).toBe('cancel-requested');
    await settled;
    expect(await engine.inspect.getState('held', 'deaf')).toBe('unknown');
    // concurrency 1: the next task runs while the cancelled handler still hangs
    await engine.submit.submit('held', { listen: false }, { id: 'next' });
    await engine.settle(['held']);
    expect(await engine.inspect.getState('held', 'next')).toBe('done');
    gate.resolve();
    await engine.settle(['held']);
    expect(await engine.inspect.getState('held', 'deaf')).toBe('unknown');
    expect(await engine.inspect.getCounts('held')).toEqual({ delayed: 0, ready: 0, running: 0, dead: 0, done: 1 });
    expect(attempts.map((a) => a.id)).toEqual(['deaf', 'next']);
  });
});
