/**
 * Conformance: dedupe, throttle and debounce (`dedupe: { key, ttlMs?, mode? }` on delay-queue submits).
 *
 * Pins down:
 * - drop (default): while a task of the key waits or runs, a submit adds nothing: submit answers the standing
 *   task's id, submitMany `{ id, created: false, dedupe: 'dropped' }`; once it ended (done, dead,
 *   cancelled) and no window holds, a new task is added;
 * - a window (`ttlMs`, from the standing task's submit): dropped within it even after the task ran, a new
 *   task after it; `extend` restarts the window at each submit within it;
 * - replace: a waiting task takes the new payload and keeps its place (due time, id); a running one keeps
 *   its own (`dropped`);
 * - debounce: a waiting task takes the new payload and the new submit's due time; it runs once, with the last
 *   payload; a submit once it started adds a new task;
 * - submitMany decides item by item, in order (one call may create and drop the same key);
 * - keys are per type; bad options are InvalidSubmitOptionsError naming the field, nothing written.
 */
import { InvalidSubmitOptionsError, type Task } from 'nestjs-distributed-queue';
import { workerClass } from '../support/queue-app';
import { deferred, describeEngines, rejectionOf, type Engine } from './engine';

const runs: { id: string; type: string; payload: unknown }[] = [];
let gate = deferred();
let started = deferred();

const handle = async (task: Task<unknown>) => {
  runs.push({ id: task.id, type: task.type, payload: task.payload });
  if (task.payload === 'hold') {
    started.resolve();
    await gate.promise;
  }
  if (task.payload === 'fail') throw new Error('fail');
};
const Worker = workerClass('dd', { concurrency: 2, maxAttempts: 1 }, handle);
const Other = workerClass('dd2', { concurrency: 2, maxAttempts: 1 }, handle);

async function one(engine: Engine, payload: unknown, dedupe: object, extra: object = {}) {
  const [result] = await engine.submit.submitMany('dd', [{ payload, dedupe, ...extra } as never]);
  return result;
}

describeEngines('dedupe', (start) => {
  afterEach(() => {
    gate.resolve();
    runs.length = 0;
    gate = deferred();
    started = deferred();
  });

  it('drop: a waiting or running task of the key stands; once it ended (done, dead, cancelled) a new one is added', async () => {
    const engine = await start({}, [Worker]);
    // NOTE: Redis: 500 ms, a margin for the calls below on a loaded machine before the task falls due
    const first = await one(engine, 1, { key: 'k' }, { delay: 500 });
    expect(first).toEqual({ id: expect.any(String), created: true });
    expect(await one(engine, 2, { key: 'k' })).toEqual({ id: first.id, created: false, dedupe: 'dropped' });
    expect(await engine.submit.submit('dd', 3, { dedupe: { key: 'k', mode: 'drop' } })).toBe(first.id);
    expect(await one(engine, 4, { key: 'k' }, { id: 'given' })).toEqual({ id: first.id, created: false, dedupe: 'dropped' });
    expect(await engine.inspect.getState('dd', 'given')).toBe('unknown');
    expect(await engine.inspect.getTask('dd', first.id)).toMatchObject({ state: 'delayed', payload: 1 });
    await engine.advance(500);
    const next = await one(engine, 5, { key: 'k' });
    expect(next.created).toBe(true);
    expect(next.id).not.toBe(first.id);
    // running
    const held = await one(engine, 'hold', { key: 'h' });
    const settled = engine.settle(['dd']);
    await started.promise;
    expect(await one(engine, 6, { key: 'h' })).toEqual({ id: held.id, created: false, dedupe: 'dropped' });
    gate.resolve();
    await settled;
    // dead, and cancelled
    const dying = await one(engine, 'fail', { key: 'd' });
    await engine.settle(['dd']);
    expect(await engine.inspect.getState('dd', dying.id)).toBe('dead');
    expect((await one(engine, 7, { key: 'd' }, { delay: 60_000 })).created).toBe(true);
    const waiting = await one(engine, 8, { key: 'c' }, { delay: 60_000 });
    expect(await engine.submit.cancel('dd', waiting.id)).toBe('cancelled');
    expect((await one(engine, 9, { key: 'c' }, { delay: 60_000 })).created).toBe(true);
    expect(runs.map((r) => r.payload)).toEqual([1, 5, 'hold', 'fail']);
  });

  it('a window (ttlMs): dropped within it after the task ran, a new task after it; extend restarts the window', async () => {
    const engine = await start({}, [Worker]);
    // NOTE: Redis: a window of 1.5 s, a margin for settle and the read on a loaded machine
    const first = await one(engine, 1, { key: 'w', ttlMs: 1500 });
    await engine.settle(['dd']);
    expect(await engine.inspect.getState('dd', first.id)).toBe('done');
    expect(await one(engine, 2, { key: 'w', ttlMs: 1500 })).toEqual({ id: first.id, created: false, dedupe: 'dropped' });
    await engine.advance(1500);
    expect((await one(engine, 3, { key: 'w', ttlMs: 1500 })).created).toBe(true);

    // NOTE: Redis: real time also passes while settle reads the counts: each advance stays well inside the window
    // (windows of 3 s: each submit lands at least 1.5 s before the end of the window it must be within; 1.2 s
    // windows with 500 ms margins failed once in a full run on a loaded machine)
    const x = await one(engine, 10, { key: 'x', ttlMs: 3000, mode: 'extend' });
    expect(x.created).toBe(true);
    await engine.advance(1500);
    expect(await one(engine, 11, { key: 'x', ttlMs: 3000, mode: 'extend' })).toEqual({ id: x.id, created: false, dedupe: 'extended' });
    await engine.advance(1500); // past the first window's end, within the extension
    expect(await one(engine, 12, { key: 'x', ttlMs: 3000, mode: 'extend' })).toEqual({ id: x.id, created: false, dedupe: 'extended' });
    await engine.advance(3300);
    expect((await one(engine, 13, { key: 'x', ttlMs: 3000, mode: 'extend' })).created).toBe(true);
    await engine.settle(['dd']);
    expect(runs.map((r) => r.payload)).toEqual([1, 3, 10, 13]);
  });

  it('replace: a waiting task takes the last payload and keeps its place; a running one keeps its own', async () => {
    const engine = await start({}, [Worker]);
    await engine.control.pause('dd');
    await engine.submit.submit('dd', 'before', { id: 'before' });
    const first = await one(engine, 'a', { key: 'r', mode: 'replace' });
    await engine.submit.submit('dd', 'after', { id: 'after' });
    const due = (await engine.inspect.getTask('dd', first.id)).dueAt;
    for (const p of ['b', 'c']) expect(await one(engine, p, { key: 'r', mode: 'replace' }, { delay: 100 })).toEqual({ id: first.id, created: false, dedupe: 'replaced' });
    expect(await engine.inspect.getTask('dd', first.id)).toMatchObject({ state: 'ready', payload: 'c', dueAt: due });
    await engine.control.resume('dd');
    await engine.settle(['dd']);
    expect(runs.map((r) => r.payload)).toEqual(['before', 'c', 'after']);

    const held = await one(engine, 'hold', { key: 'r2', mode: 'replace' });
    const settled = engine.settle(['dd']);
    await started.promise;
    expect(await one(engine, 'd', { key: 'r2', mode: 'replace' })).toEqual({ id: held.id, created: false, dedupe: 'dropped' });
    gate.resolve();
    await settled;
    expect(runs.map((r) => r.payload)).toEqual(['before', 'c', 'after', 'hold']);
  });

  it('debounce: a burst runs once, with its last payload, its delay after the last submit; a submit once it started adds a new task', async () => {
    const engine = await start({}, [Worker]);
    // NOTE: Redis: real time also passes while settle reads the counts and between the calls: margins of
    // 500 ms around the due times (with 300 ms, a loaded full run ran the task before the check of none)
    const first = await one(engine, 0, { key: 'd', mode: 'debounce' }, { delay: 2000 });
    expect(first.created).toBe(true);
    const due0 = (await engine.inspect.getTask('dd', first.id)).dueAt!;
    await engine.advance(1000);
    expect(await one(engine, 1, { key: 'd', mode: 'debounce' }, { delay: 2000 })).toEqual({ id: first.id, created: false, dedupe: 'debounced' });
    const moved = await engine.inspect.getTask('dd', first.id);
    expect(moved).toMatchObject({ state: 'delayed', payload: 1 });
    expect(moved.dueAt! - due0).toBeGreaterThanOrEqual(1000);
    await engine.advance(1500); // past the first submit's due time, not the last one's
    expect(runs).toEqual([]);
    await engine.advance(1000);
    expect(runs).toEqual([{ id: first.id, type: 'dd', payload: 1 }]);

    const held = await one(engine, 'hold', { key: 'e', mode: 'debounce' });
    const settled = engine.settle(['dd']);
    await started.promise;
    const during = await one(engine, 'during', { key: 'e', mode: 'debounce' });
    expect(during.created).toBe(true);
    expect(during.id).not.toBe(held.id);
    gate.resolve();
    await settled;
    await engine.settle(['dd']);
    expect(runs.map((r) => r.payload)).toEqual([1, 'hold', 'during']);
  });

  it('submitMany decides item by item, in order; keys are per type', async () => {
    const engine = await start({}, [Worker, Other]);
    await engine.control.pause('dd');
    const results = await engine.submit.submitMany('dd', [
      { payload: 1, dedupe: { key: 'a' } }, { payload: 2, dedupe: { key: 'a' } }, { payload: 3, dedupe: { key: 'b' } },
      { payload: 4 }, { payload: 5, dedupe: { key: 'a', mode: 'replace' } },
    ]);
    expect(results.map((r) => [r.created, r.dedupe])).toEqual([[true, undefined], [false, 'dropped'], [true, undefined], [true, undefined], [false, 'replaced']]);
    expect(results[1].id).toBe(results[0].id);
    expect(results[4].id).toBe(results[0].id);
    expect(new Set(results.map((r) => r.id)).size).toBe(3);
    expect(await engine.inspect.getCounts('dd')).toMatchObject({ ready: 3 });
    const [other] = await engine.submit.submitMany('dd2', [{ payload: 'other', dedupe: { key: 'a' } }]);
    expect(other.created).toBe(true);
    await engine.control.resume('dd');
    await engine.settle(['dd', 'dd2']);
    expect(runs.filter((r) => r.type === 'dd').map((r) => r.payload)).toEqual([5, 3, 4]);
    expect(runs.filter((r) => r.type === 'dd2').map((r) => r.payload)).toEqual(['other']);
  });

  it('bad dedupe options are InvalidSubmitOptionsError naming the field; nothing is written', async () => {
    const engine = await start({}, [Worker]);
    await engine.control.pause('dd');
    const cases: [unknown, string][] = [
      [null, 'dedupe'], ['k', 'dedupe'], [{}, 'dedupe.key'], [{ key: '' }, 'dedupe.key'], [{ key: 'x'.repeat(257) }, 'dedupe.key'],
      [{ key: 'k', ttlMs: -1 }, 'dedupe.ttlMs'], [{ key: 'k', ttlMs: 1.5 }, 'dedupe.ttlMs'], [{ key: 'k', mode: 'merge' }, 'dedupe.mode'],
      [{ key: 'k', mode: 'extend' }, 'dedupe.ttlMs'], [{ key: 'k', window: 5 }, 'dedupe.window'],
    ];
    for (const [dedupe, option] of cases) {
      const error = await rejectionOf(engine.submit.submit('dd', {}, { id: 'bad', dedupe: dedupe as never }));
      expect(error).toBeInstanceOf(InvalidSubmitOptionsError);
      expect([dedupe, error]).toEqual([dedupe, expect.objectContaining({ option })]);
    }
    const many = await rejectionOf(engine.submit.submitMany('dd', [{ id: 'fine', payload: 1, dedupe: { key: 'k' } }, { payload: 2, dedupe: { key: '' } }]));
    expect(many).toMatchObject({ name: 'InvalidSubmitOptionsError', option: 'dedupe.key' });
    expect(await engine.inspect.getState('dd', 'bad')).toBe('unknown');
    expect(await engine.inspect.getState('dd', 'fine')).toBe('unknown');
    expect(await engine.inspect.getCounts('dd')).toEqual({ delayed: 0, ready: 0, running: 0, dead: 0, done: 0 });
    // the key is free: nothing of the refused calls stands for it
    expect((await one(engine, 1, { key: 'k' })).created).toBe(true);
  });
});
