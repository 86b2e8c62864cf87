/**
 * Conformance: local lifecycle events (`@OnTaskEvent`, scope 'local') of the tasks this application ran.
 *
 * Pins down:
 * - the sequence per task: done → completed; failed then done → failed, retrying, completed; failing past
 *   maxAttempts → failed, retrying, failed, dead; timed out → failed, dead (TaskTimeoutError); cancelled while
 *   running → failed, cancelled (TaskCancelledError); cancelled while waiting (ran nowhere) → nothing;
 * - the fields: `{ event, scope: 'local', task, at }`; `task` as the handler saw it (id, type, payload, attempt
 *   of that attempt, dueAt); `completed` has `result` (none when the handler returned nothing) and no error;
 *   `failed`, `retrying`, `dead`, `cancelled` carry `error`, the very Error the handler threw (or the
 *   signal's reason); every event of a run carries `durationMs` and `startedAt` (NOTE: TaskEvent's doc names
 *   only completed, failed and rateLimited for them; the engine sets them on retrying, dead, cancelled too);
 * - listening: by type and by event name or list; '*' hears every type's lifecycle events but not `progress`,
 *   which is heard by name with the value given to `task.progress`; a listener that throws changes nothing;
 * - ordered tasks: completed (with key and fence), failed + retrying, failed + dead.
 */
import { Injectable } from '@nestjs/common';
import { OnTaskEvent, TaskCancelledError, TaskTimeoutError, type ActiveTask, type TaskEvent } from 'nestjs-distributed-queue';
import { untilAborted, workerClass } from '../support/queue-app';
import { deferred, describeEngines } from './engine';

const everything: TaskEvent[] = [];
const deadOnly: TaskEvent[] = [];
const ofOther: TaskEvent[] = [];
const progress: TaskEvent[] = [];
const thrown = new Map<string, Error[]>();
let started = deferred();
let throwingCalls = 0;

@Injectable()
class Listeners {
  @OnTaskEvent('*', '*')
  all(event: TaskEvent): void {
    everything.push(event);
  }

  @OnTaskEvent('ev', ['dead'])
  dead(event: TaskEvent): void {
    deadOnly.push(event);
  }

  @OnTaskEvent('other', '*')
  other(event: TaskEvent): void {
    ofOther.push(event);
  }

  @OnTaskEvent('ev', 'progress')
  progress(event: TaskEvent): void {
    progress.push(event);
  }

  @OnTaskEvent('*', '*')
  throws(): void {
    throwingCalls++;
    throw new Error('listener exploded');
  }
}

type Mode = 'ok' | 'nothing' | 'once' | 'always' | 'hold' | 'progress';

const Worker = workerClass<{ mode: Mode }>('ev', { concurrency: 4, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 100, jitter: 0 } }, async (task: ActiveTask<{ mode: Mode }>, signal: AbortSignal) => {
  const { mode } = task.payload;
  const fail = (error: Error): never => {
    thrown.set(task.id, [...(thrown.get(task.id) ?? []), error]);
    throw error;
  };
  if (mode === 'hold') {
    started.resolve();
    return untilAborted(signal);
  }
  if (mode === 'progress') task.progress({ done: 1, total: 2 });
  if (mode === 'always' || (mode === 'once' && task.attempt === 1)) fail(new TypeError(`no ${task.id} ${task.attempt}`));
  return mode === 'nothing' ? undefined : { ok: task.id };
});
const Slow = workerClass('slow', { concurrency: 1, timeoutMs: 100, maxAttempts: 1 }, (_task, signal: AbortSignal) => untilAborted(signal));
const Ordered = workerClass<{ mode: Mode }>('oev', { ordered: true, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 100, jitter: 0 } }, (task) => {
  const { mode } = task.payload;
  if (mode === 'always' || (mode === 'once' && task.attempt === 1)) throw new RangeError(`no ${task.key} ${task.attempt}`);
  return { key: task.key };
});

const names = (id: string) => everything.filter((e) => e.task.id === id).map((e) => e.event);
const find = (id: string, event: string, attempt?: number) => everything.find((e) => e.task.id === id && e.event === event && (attempt === undefined || e.task.attempt === attempt))!;

describeEngines('local task events', (start) => {
  afterEach(() => {
    for (const list of [everything, deadOnly, ofOther, progress]) list.length = 0;
    thrown.clear();
    started = deferred();
    throwingCalls = 0;
  });

  it('each task\'s events come in its order: completed; failed, retrying, completed; failed, retrying, failed, dead; failed, cancelled', async () => {
    const engine = await start({}, [Worker, Slow, Listeners]);
    await engine.submit.submitMany('ev', (['ok', 'nothing', 'once', 'always', 'hold'] as const).map((id) => ({ id, payload: { mode: id } })));
    await engine.submit.submit('ev', { mode: 'ok' }, { id: 'waiting', delay: 60_000 });
    await engine.submit.submit('slow', {}, { id: 'slow' });
    const settled = engine.settle(['ev']);
    await started.promise;
    expect(await engine.submit.cancel('ev', 'hold')).toBe('cancel-requested');
    expect(await engine.submit.cancel('ev', 'waiting')).toBe('cancelled');
    await settled;
    await engine.advance(100);
    expect(names('ok')).toEqual(['completed']);
    expect(names('nothing')).toEqual(['completed']);
    expect(names('once')).toEqual(['failed', 'retrying', 'completed']);
    expect(names('always')).toEqual(['failed', 'retrying', 'failed', 'dead']);
    expect(names('hold')).toEqual(['failed', 'cancelled']);
    expect(names('waiting')).toEqual([]);
    expect(names('slow')).toEqual(['failed', 'dead']);
    expect(find('slow', 'dead').error).toBeInstanceOf(TaskTimeoutError);
    expect(find('slow', 'failed').error).toMatchObject({ timeoutMs: 100 });
    // the listener that throws heard every one of them, and changed nothing
    expect(throwingCalls).toBe(everything.length);
    expect(await engine.inspect.getCounts('ev')).toEqual({ delayed: 0, ready: 0, running: 0, dead: 1, done: 3 });
  });

  it('carry the task as the handler saw it, the result, the very error thrown, the duration and start', async () => {
    const engine = await start({}, [Worker, Listeners]);
    await engine.control.pause('ev');
    await engine.submit.submitMany('ev', (['ok', 'nothing', 'once', 'always'] as const).map((id) => ({ id, payload: { mode: id } })));
    const dueAt = (await engine.inspect.getTask('ev', 'ok')).dueAt;
    await engine.control.resume('ev');
    await engine.settle(['ev']);
    await engine.advance(100);
    const completed = find('ok', 'completed');
    expect(completed).toEqual({
      event: 'completed', scope: 'local', task: expect.objectContaining({ id: 'ok', type: 'ev', payload: { mode: 'ok' }, attempt: 1, dueAt }),
      result: { ok: 'ok' }, durationMs: expect.any(Number), startedAt: expect.any(Number), at: expect.any(Number),
    });
    expect(completed.durationMs).toBeGreaterThanOrEqual(0);
    expect(completed.at).toBeGreaterThanOrEqual(completed.startedAt!);
    expect(find('nothing', 'completed').result).toBeUndefined();
    expect(find('nothing', 'completed').error).toBeUndefined();

    const [first, second] = thrown.get('always')!;
    for (const [event, attempt, error] of [['failed', 1, first], ['retrying', 1, first], ['failed', 2, second], ['dead', 2, second]] as const) {
      const heard = find('always', event, attempt);
      expect([event, attempt, heard]).toEqual([event, attempt, expect.objectContaining({
        event, scope: 'local', task: expect.objectContaining({ id: 'always', type: 'ev', attempt, payload: { mode: 'always' } }),
        durationMs: expect.any(Number), startedAt: expect.any(Number), at: expect.any(Number),
      })]);
      expect(heard.error).toBe(error);
      expect(heard.result).toBeUndefined();
    }
    expect(first).toBeInstanceOf(TypeError);
    expect(find('once', 'completed').task.attempt).toBe(2);
    expect(find('once', 'completed').result).toEqual({ ok: 'once' });
    expect(deadOnly.map((e) => [e.event, e.task.id])).toEqual([['dead', 'always']]);
    expect(ofOther).toEqual([]);
  });

  it('a running task cancelled: failed and cancelled carry the TaskCancelledError its signal aborted with', async () => {
    const engine = await start({}, [Worker, Listeners]);
    await engine.submit.submit('ev', { mode: 'hold' }, { id: 'hold' });
    const settled = engine.settle(['ev']);
    await started.promise;
    await engine.submit.cancel('ev', 'hold');
    await settled;
    const [failed, cancelled] = everything;
    expect(failed).toMatchObject({ event: 'failed', scope: 'local', task: { id: 'hold', attempt: 1 } });
    expect(failed.error).toBeInstanceOf(TaskCancelledError);
    expect(failed.error).toMatchObject({ id: 'hold', message: 'Task hold was cancelled' });
    expect(cancelled).toMatchObject({ event: 'cancelled', scope: 'local', task: { id: 'hold', attempt: 1 } });
    expect(cancelled.error).toBe(failed.error);
    expect(everything).toHaveLength(2);
  });

  it('progress is heard by name, with the value given, and not by \'*\'', async () => {
    const engine = await start({}, [Worker, Listeners]);
    await engine.submit.submit('ev', { mode: 'progress' }, { id: 'p' });
    await engine.settle(['ev']);
    expect(progress).toEqual([{ event: 'progress', scope: 'local', task: expect.objectContaining({ id: 'p', type: 'ev', attempt: 1 }), progress: { done: 1, total: 2 }, at: expect.any(Number) }]);
    expect(names('p')).toEqual(['completed']);
  });

  it('ordered tasks: completed with key and fence; failed, retrying; failed, dead', async () => {
    const engine = await start({ route: { qId: 'cf', partitions: 4 } }, [Ordered, Listeners]);
    const ok = await engine.submit.submitOrdered('oev', 'a', { mode: 'ok' });
    const once = await engine.submit.submitOrdered('oev', 'b', { mode: 'once' });
    const always = await engine.submit.submitOrdered('oev', 'c', { mode: 'always' });
    await engine.settle(['oev']);
    await engine.advance(100);
    expect(names(ok.id)).toEqual(['completed']);
    expect(names(once.id)).toEqual(['failed', 'retrying', 'completed']);
    expect(names(always.id)).toEqual(['failed', 'retrying', 'failed', 'dead']);
    expect(find(ok.id, 'completed')).toMatchObject({
      scope: 'local', result: { key: 'a' }, task: { id: ok.id, type: 'oev', key: 'a', attempt: 1, payload: { mode: 'ok' }, fence: { partition: 0 } },
    });
    const dead = find(always.id, 'dead');
    expect(dead.error).toBeInstanceOf(RangeError);
    expect(dead.error).toMatchObject({ message: 'no c 2' });
    expect(dead.task).toMatchObject({ key: 'c', attempt: 2 });
  });
});
