/**
 * Conformance: priorities of delay-queue tasks (0 the most urgent, the default; 1000 the least).
 *
 * Pins down:
 * - among due tasks, the lower priority starts first; FIFO within a priority (due time, then submission);
 *   a task submitted without one is of level 0;
 * - a delayed task enters its priority when it falls due (a task of a higher level due now is not held back
 *   by a more urgent one due later); among equal levels, the one due first goes first;
 * - getTask `priority` (absent for 0), getCounts `priorities` per level (absent when all waiting are level 0);
 * - changePriority: true for a waiting task (due: takes its turn in the new level at once; delayed: keeps
 *   waiting), false for running, done, dead and unknown ones; a bad priority is InvalidSubmitOptionsError;
 * - the type's `defaultPriority` applies to tasks submitted without one (an explicit 0 is 0);
 * - a retried task keeps its priority.
 */
import { InvalidSubmitOptionsError, type Task } from 'nestjs-distributed-queue';
import { workerClass } from '../support/queue-app';
import { deferred, describeEngines, rejectionOf } from './engine';

const starts: { id: string; attempt: number }[] = [];
let gate = deferred();
let started = deferred();

const handle = async (task: Task<{ failOnce?: boolean; hold?: boolean } | null>) => {
  starts.push({ id: task.id, attempt: task.attempt });
  if (task.payload?.hold) {
    started.resolve();
    await gate.promise;
  }
  if (task.payload?.failOnce && task.attempt === 1) throw new Error(`once ${task.id}`);
};
// NOTE: a backoff of 400 ms: on Redis the test pauses the type after the first attempt, before the retry is due.
const Worker = workerClass('pq', { concurrency: 1, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 400, jitter: 0 } }, handle);
const DefaultWorker = workerClass('pdef', { concurrency: 1, defaultPriority: 7 }, handle);

const ids = () => starts.map((s) => s.id);

describeEngines('priorities', (start) => {
  afterEach(() => {
    gate.resolve();
    starts.length = 0;
    gate = deferred();
    started = deferred();
  });

  it('due tasks start by priority, lower first, FIFO within one; no priority is 0', async () => {
    const engine = await start({}, [Worker]);
    await engine.control.pause('pq');
    const plan = [['a', 5], ['b', 1], ['c', undefined], ['d', 5], ['e', 0], ['f', 1], ['g', 1000], ['h', 5]] as const;
    for (const [id, priority] of plan) await engine.submit.submit('pq', null, priority === undefined ? { id } : { id, priority });
    await engine.submit.submitMany('pq', [{ id: 'i', payload: null, priority: 1 }, { id: 'j', payload: null }]);
    await engine.control.resume('pq');
    await engine.settle(['pq']);
    expect(ids()).toEqual(['c', 'e', 'j', 'b', 'f', 'i', 'a', 'd', 'h', 'g']);
  });

  it('a delayed task enters its priority when due; of one level, the one due first goes first', async () => {
    const engine = await start({}, [Worker]);
    await engine.control.pause('pq');
    // NOTE: Redis: 500 ms, a margin for the submits and the read below on a loaded machine
    await engine.submit.submit('pq', null, { id: 'late-urgent', priority: 1, delay: 500 });
    await engine.submit.submit('pq', null, { id: 'future-0', priority: 0, delay: 60_000 });
    await engine.submit.submit('pq', null, { id: 'now-2', priority: 2 });
    await engine.submit.submit('pq', null, { id: 'now-1', priority: 1 });
    expect(await engine.inspect.getState('pq', 'late-urgent')).toBe('delayed');
    await engine.advance(500);
    expect(await engine.inspect.getState('pq', 'late-urgent')).toBe('ready');
    await engine.control.resume('pq');
    await engine.settle(['pq']);
    expect(ids()).toEqual(['now-1', 'late-urgent', 'now-2']);
    expect(await engine.inspect.getState('pq', 'future-0')).toBe('delayed');
  });

  it('getTask shows a priority (none for 0); getCounts counts waiting tasks per level, none when all are level 0', async () => {
    const engine = await start({}, [Worker]);
    await engine.control.pause('pq');
    await engine.submit.submit('pq', null, { id: 'zero' });
    expect((await engine.inspect.getCounts('pq')).priorities).toBeUndefined();
    await engine.submit.submit('pq', null, { id: 'explicit-0', priority: 0 });
    await engine.submit.submit('pq', null, { id: 'five', priority: 5 });
    await engine.submit.submit('pq', null, { id: 'five-later', priority: 5, delay: 60_000 });
    await engine.submit.submit('pq', null, { id: 'max', priority: 1000 });
    expect(await engine.inspect.getTask('pq', 'zero')).toEqual({ id: 'zero', type: 'pq', state: 'ready', attempts: 0, dueAt: expect.any(Number), payload: null });
    expect((await engine.inspect.getTask('pq', 'explicit-0')).priority).toBeUndefined();
    expect(await engine.inspect.getTask('pq', 'five')).toEqual({ id: 'five', type: 'pq', state: 'ready', attempts: 0, dueAt: expect.any(Number), priority: 5, payload: null });
    expect((await engine.inspect.getTask('pq', 'five-later')).priority).toBe(5);
    expect((await engine.inspect.getTask('pq', 'max')).priority).toBe(1000);
    expect(await engine.inspect.getCounts('pq')).toEqual({ delayed: 1, ready: 4, running: 0, dead: 0, done: 0, priorities: { 0: 2, 5: 2, 1000: 1 } });
    expect(await engine.submit.cancel('pq', 'five-later')).toBe('cancelled');
    await engine.control.resume('pq');
    await engine.settle(['pq']);
    expect(await engine.inspect.getCounts('pq')).toEqual({ delayed: 0, ready: 0, running: 0, dead: 0, done: 4 });
    expect(await engine.inspect.getTask('pq', 'five')).toEqual({ id: 'five', type: 'pq', state: 'done' });
  });

  it('changePriority: a due task takes its turn in the new level at once, a delayed one keeps waiting; false when not waiting', async () => {
    const engine = await start({}, [Worker]);
    await engine.submit.submit('pq', null, { id: 'done' });
    await engine.settle(['pq']);
    await engine.control.pause('pq');
    await engine.submit.submitMany('pq', [
      { id: 'a', payload: null, priority: 3 }, { id: 'b', payload: null, priority: 3 }, { id: 'c', payload: null, priority: 2 },
      { id: 'd', payload: null }, { id: 'later', payload: null, priority: 9, delay: 60_000 },
    ]);
    expect(await engine.submit.changePriority('pq', 'b', 1)).toBe(true);
    expect(await engine.submit.changePriority('pq', 'c', 4)).toBe(true);
    expect(await engine.submit.changePriority('pq', 'later', 1)).toBe(true);
    expect(await engine.submit.changePriority('pq', 'later', 1)).toBe(true); // the same level: still waiting
    expect(await engine.submit.changePriority('pq', 'nope', 1)).toBe(false);
    expect(await engine.submit.changePriority('pq', 'done', 1)).toBe(false);
    expect(await engine.inspect.getTask('pq', 'later')).toMatchObject({ state: 'delayed', priority: 1 });
    expect((await engine.inspect.getTask('pq', 'b')).priority).toBe(1);
    expect(await engine.inspect.getCounts('pq')).toMatchObject({ priorities: { 0: 1, 1: 2, 3: 1, 4: 1 } });
    const error = await rejectionOf(engine.submit.changePriority('pq', 'a', 1001));
    expect(error).toBeInstanceOf(InvalidSubmitOptionsError);
    expect(error).toMatchObject({ option: 'priority' });
    expect(await rejectionOf(engine.submit.changePriority('pq', 'a', -1))).toMatchObject({ name: 'InvalidSubmitOptionsError', option: 'priority' });
    expect((await engine.inspect.getTask('pq', 'a')).priority).toBe(3);
    await engine.control.resume('pq');
    await engine.settle(['pq']);
    expect(ids()).toEqual(['done', 'd', 'b', 'a', 'c']);
    expect(await engine.inspect.getState('pq', 'later')).toBe('delayed');
  });

  it('changePriority is false for a running task', async () => {
    const engine = await start({}, [Worker]);
    await engine.submit.submit('pq', { hold: true }, { id: 'running', priority: 4 });
    const settled = engine.settle(['pq']);
    await started.promise;
    expect(await engine.submit.changePriority('pq', 'running', 1)).toBe(false);
    expect(await engine.inspect.getTask('pq', 'running')).toMatchObject({ state: 'running', priority: 4 });
    gate.resolve();
    await settled;
  });

  it('the type\'s defaultPriority applies to tasks submitted without one; an explicit 0 stays 0', async () => {
    const engine = await start({}, [DefaultWorker]);
    await engine.control.pause('pdef');
    await engine.submit.submit('pdef', null, { id: 'x' });
    await engine.submit.submit('pdef', null, { id: 'y', priority: 0 });
    await engine.submit.submit('pdef', null, { id: 'z', priority: 8 });
    await engine.submit.submitMany('pdef', [{ id: 'w', payload: null }]);
    expect((await engine.inspect.getTask('pdef', 'x')).priority).toBe(7);
    expect((await engine.inspect.getTask('pdef', 'w')).priority).toBe(7);
    expect((await engine.inspect.getTask('pdef', 'y')).priority).toBeUndefined();
    expect((await engine.inspect.getCounts('pdef')).priorities).toEqual({ 0: 1, 7: 2, 8: 1 });
    await engine.control.resume('pdef');
    await engine.settle(['pdef']);
    expect(ids()).toEqual(['y', 'x', 'w', 'z']);
  });

  it('a retried task keeps its priority: its retry takes its turn among the due tasks by it', async () => {
    const engine = await start({}, [Worker]);
    await engine.submit.submit('pq', { failOnce: true }, { id: 'f', priority: 5 });
    await engine.settle(['pq']);
    expect(await engine.inspect.getTask('pq', 'f')).toMatchObject({ state: 'delayed', attempts: 1, priority: 5, lastError: { message: 'once f' } });
    await engine.control.pause('pq');
    await engine.submit.submit('pq', null, { id: 'nine', priority: 9 });
    await engine.submit.submit('pq', null, { id: 'one', priority: 1 });
    await engine.advance(400);
    await engine.control.resume('pq');
    await engine.settle(['pq']);
    expect(starts).toEqual([{ id: 'f', attempt: 1 }, { id: 'one', attempt: 1 }, { id: 'f', attempt: 2 }, { id: 'nine', attempt: 1 }]);
  });
});
