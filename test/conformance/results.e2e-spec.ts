/**
 * Conformance: results and awaiting (delay queue). On every engine a wait is started, then the engine
 * settles (or advances), then the wait is awaited.
 *
 * Pins down:
 * - a handler's return value is its task's result: getTask of the done task `{ id, type, state: 'done',
 *   result }` (no `result` when it returned nothing); submitAndWait resolves with it (undefined for nothing);
 * - submitAndWait without an id gives the task a random id of 16 characters; with the id of a task still
 *   waiting it submits nothing and waits for that task;
 * - a task that dies: TaskDeadError `{ type, id, error: { name, message, attempts } }`; waitFor of it later too;
 * - cancelled waiting or running: TaskCancelledError; waitFor of a cancelled id: TaskNotFoundError;
 * - waitFor of a done task: its result at once; of an unknown id: TaskNotFoundError `{ type, id }`;
 * - a result over maxResultBytes or not JSON is not kept: the task is done, getTask says `resultNotKept`
 *   (bytes, -1), a waiter gets ResultNotKeptError `{ bytes }`;
 * - keepDone: only the last N finished tasks are remembered (older ones are 'unknown', TaskNotFoundError);
 * - timeoutMs passes: WaitTimeoutError `{ type, id, timeoutMs }`, the task goes on; bad options:
 *   InvalidArgumentError, nothing submitted.
 */
import {
  InvalidArgumentError, ResultNotKeptError, TaskCancelledError, TaskDeadError, TaskNotFoundError, WaitTimeoutError, type Task,
} from 'nestjs-distributed-queue';
import { untilAborted, workerClass } from '../support/queue-app';
import { deferred, describeEngines, rejectionOf } from './engine';

interface Job {
  ret?: unknown;
  fail?: boolean;
  hold?: boolean;
  big?: boolean;
  bigint?: boolean;
}

const seen: { id: string; attempt: number }[] = [];
let started = deferred();

const Worker = workerClass<Job>('rs', { concurrency: 4, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 100, jitter: 0 } }, async (task: Task<Job>, signal: AbortSignal) => {
  seen.push({ id: task.id, attempt: task.attempt });
  const job = task.payload;
  if (job.fail) throw new Error(`boom ${task.id} ${task.attempt}`);
  if (job.hold) {
    started.resolve();
    await untilAborted(signal);
  }
  if (job.big) return 'x'.repeat(200);
  if (job.bigint) return 10n;
  return job.ret;
});

describeEngines('results and awaiting', (start) => {
  afterEach(() => {
    seen.length = 0;
    started = deferred();
  });

  it('submitAndWait resolves with the handler\'s result; getTask of the done task shows it', async () => {
    const engine = await start({}, [Worker]);
    const waiting = engine.submit.submitAndWait<{ total: number }>('rs', { ret: { total: 42, items: ['a'] } });
    const nothing = engine.submit.submitAndWait('rs', {}, { id: 'nothing' });
    const falsy = engine.submit.submitAndWait('rs', { ret: 0 }, { id: 'zero' });
    await engine.settle(['rs']);
    expect(await waiting).toEqual({ total: 42, items: ['a'] });
    expect(await nothing).toBeUndefined();
    expect(await falsy).toBe(0);
    const random = seen.map((s) => s.id).find((id) => id !== 'nothing' && id !== 'zero')!;
    expect(random).toHaveLength(16);
    expect(random.startsWith('#')).toBe(false);
    expect(await engine.inspect.getTask('rs', random)).toEqual({ id: random, type: 'rs', state: 'done', result: { total: 42, items: ['a'] } });
    expect(await engine.inspect.getTask('rs', 'nothing')).toEqual({ id: 'nothing', type: 'rs', state: 'done' });
    expect(await engine.inspect.getTask('rs', 'zero')).toEqual({ id: 'zero', type: 'rs', state: 'done', result: 0 });
  });

  it('submitAndWait of a delayed task resolves once it ran; with the id of a task still waiting it waits for that task', async () => {
    const engine = await start({}, [Worker]);
    // NOTE: Redis: due in 1 s, a margin for settle and the reads below on a loaded machine
    await engine.submit.submit('rs', { ret: 'first' }, { id: 'same', delay: 1000 });
    const delayed = engine.submit.submitAndWait('rs', { ret: 'own' }, { id: 'own', delay: 1000 });
    const second = engine.submit.submitAndWait('rs', { ret: 'second' }, { id: 'same' });
    await engine.settle(['rs']);
    expect(await engine.inspect.getTask('rs', 'same')).toMatchObject({ state: 'delayed', payload: { ret: 'first' } });
    expect(await engine.inspect.getState('rs', 'own')).toBe('delayed');
    await engine.advance(1000);
    expect(await second).toBe('first');
    expect(await delayed).toBe('own');
    expect(seen.map((s) => s.id).sort()).toEqual(['own', 'same']);
  });

  it('rejects with TaskDeadError for a task that dies (its last error); waitFor of it later too', async () => {
    const engine = await start({}, [Worker]);
    const dying = rejectionOf(engine.submit.submitAndWait('rs', { fail: true }, { id: 'd1' }));
    await engine.settle(['rs']);
    await engine.advance(100);
    const error = await dying;
    expect(error).toBeInstanceOf(TaskDeadError);
    expect(error).toMatchObject({
      name: 'TaskDeadError', type: 'rs', id: 'd1', message: 'Task d1 of type "rs" is dead: Error: boom d1 2',
      error: { name: 'Error', message: 'boom d1 2', attempts: 2 },
    });
    const later = await rejectionOf(engine.submit.waitFor('rs', 'd1'));
    expect(later).toBeInstanceOf(TaskDeadError);
    expect(later).toMatchObject({ id: 'd1', error: { message: 'boom d1 2', attempts: 2 } });
  });

  it('rejects with TaskCancelledError when the task is cancelled waiting or running; waitFor of a cancelled id: TaskNotFoundError', async () => {
    const engine = await start({}, [Worker]);
    const waiting = rejectionOf(engine.submit.submitAndWait('rs', {}, { id: 'c1', delay: 60_000 }));
    await engine.settle(['rs']);
    await engine.advance(0);
    expect(await engine.inspect.getState('rs', 'c1')).toBe('delayed');
    expect(await engine.submit.cancel('rs', 'c1')).toBe('cancelled');
    expect(await waiting).toBeInstanceOf(TaskCancelledError);
    const running = rejectionOf(engine.submit.submitAndWait('rs', { hold: true }, { id: 'c2' }));
    const settled = engine.settle(['rs']);
    await started.promise;
    expect(await engine.submit.cancel('rs', 'c2')).toBe('cancel-requested');
    await settled;
    const error = await running;
    expect(error).toBeInstanceOf(TaskCancelledError);
    expect(error).toMatchObject({ id: 'c2' });
    for (const id of ['c1', 'c2']) {
      const missing = await rejectionOf(engine.submit.waitFor('rs', id));
      expect(missing).toBeInstanceOf(TaskNotFoundError);
      expect(missing).toMatchObject({ type: 'rs', id });
    }
  });

  it('waitFor of a done task answers its result at once; of an unknown id, TaskNotFoundError', async () => {
    const engine = await start({}, [Worker]);
    await engine.submit.submit('rs', { ret: 'ok' }, { id: 'w1' });
    await engine.settle(['rs']);
    expect(await engine.submit.waitFor('rs', 'w1')).toBe('ok');
    const missing = await rejectionOf(engine.submit.waitFor('rs', 'nope'));
    expect(missing).toBeInstanceOf(TaskNotFoundError);
    expect(missing).toMatchObject({ name: 'TaskNotFoundError', type: 'rs', id: 'nope' });
    // waitFor of a task submitted earlier and still waiting resolves once it ran
    await engine.submit.submit('rs', { ret: 'later' }, { id: 'w2', delay: 150 });
    const later = engine.submit.waitFor('rs', 'w2');
    await engine.advance(150);
    expect(await later).toBe('later');
  });

  it('a result over maxResultBytes or not JSON is not kept: the task is done, readers are told', async () => {
    const engine = await start({ maxResultBytes: 100 }, [Worker]);
    const big = rejectionOf(engine.submit.submitAndWait('rs', { big: true }, { id: 'big' }));
    await engine.submit.submit('rs', { bigint: true }, { id: 'bigint' });
    await engine.settle(['rs']);
    const error = await big;
    expect(error).toBeInstanceOf(ResultNotKeptError);
    expect(error).toMatchObject({ type: 'rs', id: 'big', bytes: 202 });
    expect(await engine.inspect.getTask('rs', 'big')).toEqual({ id: 'big', type: 'rs', state: 'done', resultNotKept: 202 });
    expect(await engine.inspect.getTask('rs', 'bigint')).toEqual({ id: 'bigint', type: 'rs', state: 'done', resultNotKept: -1 });
    expect(await rejectionOf(engine.submit.waitFor('rs', 'bigint'))).toMatchObject({ name: 'ResultNotKeptError', bytes: -1 });
  });

  it('keepDone: only the last N finished tasks (and their results) are remembered', async () => {
    const engine = await start({ keepDone: 2 }, [Worker]);
    for (const id of ['k1', 'k2', 'k3']) {
      await engine.submit.submit('rs', { ret: id }, { id });
      await engine.settle(['rs']);
    }
    expect(await engine.inspect.getCounts('rs')).toEqual({ delayed: 0, ready: 0, running: 0, dead: 0, done: 2 });
    expect(await engine.inspect.getState('rs', 'k1')).toBe('unknown');
    expect(await engine.inspect.getTask('rs', 'k2')).toEqual({ id: 'k2', type: 'rs', state: 'done', result: 'k2' });
    expect(await rejectionOf(engine.submit.waitFor('rs', 'k1'))).toBeInstanceOf(TaskNotFoundError);
    expect(await engine.submit.waitFor('rs', 'k3')).toBe('k3');
    expect((await engine.inspect.listTasks('rs', 'done')).map((t) => t.id)).toEqual(['k3', 'k2']);
  });

  it('gives up after timeoutMs with WaitTimeoutError (the task goes on); bad options are InvalidArgumentError, nothing submitted', async () => {
    const engine = await start({}, [Worker]);
    const timedOut = rejectionOf(engine.submit.submitAndWait('rs', { ret: 'late' }, { id: 'late', delay: 60_000, timeoutMs: 100 }));
    await engine.advance(150);
    const error = await timedOut;
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect(error).toMatchObject({ type: 'rs', id: 'late', timeoutMs: 100 });
    expect(await engine.inspect.getState('rs', 'late')).toBe('delayed');
    for (const bad of [{ timeoutMs: 0 }, { timeoutMs: 1.5 }, { timeoutMs: 'x' }, { signal: 'x' }]) {
      const refused = await rejectionOf(engine.submit.submitAndWait('rs', {}, { id: 'bad', ...(bad as object) }));
      expect(refused).toBeInstanceOf(InvalidArgumentError);
    }
    expect(await engine.inspect.getState('rs', 'bad')).toBe('unknown');
    expect(await engine.inspect.getCounts('rs')).toEqual({ delayed: 1, ready: 0, running: 0, dead: 0, done: 0 });
  });
});
