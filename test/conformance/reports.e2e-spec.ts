/**
 * Conformance: what a running handler reports, `task.progress(value)` and `task.log(line)` (README "Progress
 * and logs"), as getTask shows it (every engine).
 *
 * Pins down:
 * - progress: getTask shows the running attempt's last value (`progress`, with the running task's fields), none
 *   once the attempt ended (done, or failed and waiting for its retry);
 * - logs: kept with the task across attempts, oldest first, each `{ attempt, at, line }`; with the done task
 *   and with the dead letter; a task that logs nothing has no `logs`; calls made after the attempt ended keep
 *   nothing;
 * - caps: `taskLogs.maxLines` keeps the newest lines and counts the others (`logsDropped`), across attempts;
 *   `taskLogs.maxBytes` likewise (lines of 300 characters in 1024 bytes: 3 kept); a line longer than 4,096
 *   characters is cut and says so; the newest line stays, whatever its size;
 * - bad input throws InvalidArgumentError in the handler (`argument`: 'progress' for undefined, a cycle, a
 *   BigInt, a value over `maxProgressBytes`; 'line' for a line that is not a string), keeps nothing, and the
 *   task goes on.
 *
 * NOTE: on Redis a worker writes reports at most every 200 ms (an attempt's last ones before its end), so a
 * read right after a `progress` call may not see it yet: those reads poll getTask, bounded (`until`); the
 * memory engine has it at once. Everything read after an attempt ended is exact.
 */
import { InvalidArgumentError, type ActiveTask, type TaskLogLine } from 'nestjs-distributed-queue';
import { workerClass } from '../support/queue-app';
import { deferred, describeEngines, type Engine, until } from './engine';

interface Job {
  /** Progress values reported in turn before the gate (attempt 1) or before returning. */
  progress?: unknown[];
  /** Lines logged per attempt: `<attempt>:<n>`. */
  lines?: number;
  /** The lines' length in characters (padded with 'x'). */
  size?: number;
  /** Wait on the gate after reporting. */
  hold?: boolean;
  /** Fail attempts up to this one. */
  failUntil?: number;
  bad?: boolean;
  /** Keep the task to call it after the attempt ended. */
  keep?: boolean;
}

const thrown: unknown[] = [];
const kept: ActiveTask[] = [];
let gate = deferred();
let started = deferred();

const tryTo = (fn: () => void): void => {
  try {
    fn();
  } catch (error) {
    thrown.push(error);
  }
};

const report = async (task: ActiveTask<Job>): Promise<string> => {
  const job = task.payload;
  if (job.keep) kept.push(task);
  if (job.bad) {
    tryTo(() => task.progress(undefined));
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    tryTo(() => task.progress(cycle));
    tryTo(() => task.progress(BigInt(1)));
    tryTo(() => task.progress('x'.repeat(100)));
    tryTo(() => task.log(42 as unknown as string));
    tryTo(() => task.log(null as unknown as string));
    return 'went on';
  }
  for (const value of job.progress ?? []) task.progress(value);
  for (let n = 1; n <= (job.lines ?? 0); n++) task.log(job.size ? `${task.attempt}:${n}:`.padEnd(job.size, 'x') : `${task.attempt}:${n}`);
  if (job.hold && task.attempt === 1) {
    started.resolve();
    await gate.promise;
  }
  if (task.attempt <= (job.failUntil ?? 0)) throw new Error(`attempt ${task.attempt} fails`);
  return 'ok';
};

// NOTE: a retry 1 s after a failed attempt (was 200 ms): on a loaded cluster a settle's quiet readings took
// longer than that, and a retry a case reads as delayed had already fallen due or run (a full run saw both)
const BACKOFF_MS = 1000;
const Worker = workerClass<Job>('rp', { concurrency: 2, maxAttempts: 3, backoff: { type: 'fixed', delayMs: BACKOFF_MS, jitter: 0 } }, report);
const LongLine = workerClass('rpl', { concurrency: 1 }, (task: ActiveTask) => {
  task.log('short');
  task.log('y'.repeat(5000));
});

const lines = (logs: TaskLogLine[] | undefined) => (logs ?? []).map(({ attempt, line }) => [attempt, line]);

/** The task's progress once getTask shows `expected` (Redis writes it within 200 ms). */
const progressShown = (engine: Engine, id: string, expected: unknown) =>
  until(async () => {
    const task = await engine.inspect.getTask('rp', id);
    return JSON.stringify(task.progress) === JSON.stringify(expected) ? task : null;
  }, `progress ${JSON.stringify(expected)} of ${id}`);

describeEngines('progress and logs', (start) => {
  afterEach(() => {
    gate.resolve();
    gate = deferred();
    started = deferred();
    thrown.length = 0;
    kept.length = 0;
  });

  it('getTask shows the running attempt\'s last progress, and none once the attempt ended', async () => {
    const engine = await start({}, [Worker]);
    await engine.submit.submit('rp', { progress: [1, 50, { done: 2, total: 3 }], hold: true }, { id: 'p' });
    const settled = engine.settle(['rp']);
    await started.promise;
    const running = await progressShown(engine, 'p', { done: 2, total: 3 });
    expect(running).toEqual({
      id: 'p', type: 'rp', state: 'running', attempts: 1, dueAt: expect.any(Number), payload: { progress: [1, 50, { done: 2, total: 3 }], hold: true },
      leaseExpiresAt: expect.any(Number), leaseHolder: expect.any(String), progress: { done: 2, total: 3 },
    });
    gate.resolve();
    await settled;
    expect(await engine.inspect.getTask('rp', 'p')).toEqual({ id: 'p', type: 'rp', state: 'done', result: 'ok' });

    // a failed attempt's progress goes with it: none while the task waits for its retry
    gate = deferred();
    started = deferred();
    await engine.submit.submit('rp', { progress: ['half'], hold: true, failUntil: 1 }, { id: 'q' });
    const again = engine.settle(['rp']);
    await started.promise;
    await progressShown(engine, 'q', 'half');
    gate.resolve();
    await again;
    const waiting = await engine.inspect.getTask('rp', 'q');
    expect(waiting).toMatchObject({ state: 'delayed', attempts: 1, lastError: { message: 'attempt 1 fails' } });
    expect('progress' in waiting).toBe(false);
    await engine.advance(BACKOFF_MS);
    expect(await engine.inspect.getTask('rp', 'q')).toEqual({ id: 'q', type: 'rp', state: 'done', result: 'ok' });
  });

  it('log lines are kept across attempts, oldest first, with the done task and with the dead letter', async () => {
    const engine = await start({}, [Worker]);
    await engine.submit.submit('rp', { lines: 2, failUntil: 2 }, { id: 'thrice' });
    await engine.submit.submit('rp', { lines: 1, failUntil: 3 }, { id: 'dies' });
    await engine.submit.submit('rp', {}, { id: 'silent' });
    await engine.settle(['rp']);
    const first = await engine.inspect.getTask('rp', 'thrice');
    expect(first).toMatchObject({ state: 'delayed', attempts: 1 });
    expect(lines(first.logs)).toEqual([[1, '1:1'], [1, '1:2']]);
    await engine.advance(BACKOFF_MS);
    await engine.advance(BACKOFF_MS);

    const done = await engine.inspect.getTask('rp', 'thrice');
    expect(done).toEqual({ id: 'thrice', type: 'rp', state: 'done', result: 'ok', logs: expect.any(Array) });
    expect(lines(done.logs)).toEqual([[1, '1:1'], [1, '1:2'], [2, '2:1'], [2, '2:2'], [3, '3:1'], [3, '3:2']]);
    const at = done.logs!.map((l) => l.at);
    expect(at.every((t) => Number.isInteger(t))).toBe(true);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    // the first attempt's lines were written before it failed, the second attempt's once its retry was due
    expect(at[1]).toBeLessThanOrEqual(first.lastError!.failedAt);
    expect(at[2]).toBeGreaterThanOrEqual(first.dueAt!);

    const dead = await engine.inspect.getTask('rp', 'dies');
    expect(dead).toMatchObject({ state: 'dead', attempts: 3 });
    expect(lines(dead.logs)).toEqual([[1, '1:1'], [2, '2:1'], [3, '3:1']]);
    expect('logsDropped' in dead).toBe(false);
    expect('progress' in dead).toBe(false);
    expect(await engine.inspect.getTask('rp', 'silent')).toEqual({ id: 'silent', type: 'rp', state: 'done', result: 'ok' });
  });

  it('taskLogs.maxLines keeps the newest lines across attempts and counts the dropped ones', async () => {
    const engine = await start({ taskLogs: { maxLines: 3 } }, [Worker]);
    await engine.submit.submit('rp', { lines: 5 }, { id: 'many' });
    await engine.submit.submit('rp', { lines: 2, failUntil: 1 }, { id: 'two' });
    await engine.settle(['rp']);
    const many = await engine.inspect.getTask('rp', 'many');
    expect(lines(many.logs)).toEqual([[1, '1:3'], [1, '1:4'], [1, '1:5']]);
    expect(many.logsDropped).toBe(2);
    expect(lines((await engine.inspect.getTask('rp', 'two')).logs)).toEqual([[1, '1:1'], [1, '1:2']]);
    await engine.advance(BACKOFF_MS);
    const two = await engine.inspect.getTask('rp', 'two');
    expect(two).toMatchObject({ state: 'done', logsDropped: 1 });
    expect(lines(two.logs)).toEqual([[1, '1:2'], [2, '2:1'], [2, '2:2']]);
  });

  it('taskLogs.maxBytes keeps the newest lines within the bytes; a long line is cut; the newest line stays', async () => {
    const engine = await start({ taskLogs: { maxLines: 200, maxBytes: 1024 } }, [Worker, LongLine]);
    // each line kept as [attempt, at, text]: about 320 bytes for 300 characters
    await engine.submit.submit('rp', { lines: 6, size: 300 }, { id: 'wide' });
    await engine.settle(['rp']);
    const wide = await engine.inspect.getTask('rp', 'wide');
    expect(wide.logs!.map((l) => l.line.slice(0, 4))).toEqual(['1:4:', '1:5:', '1:6:']);
    expect(wide.logs!.every((l) => l.line.length === 300)).toBe(true);
    expect(wide.logsDropped).toBe(3);

    // a line of 5,000 characters: its first 4,096 kept, and a note of what was cut; larger than maxBytes, it
    // stays (the newest line stays whatever its size), the line before it goes
    await engine.submit.submit('rpl', {}, { id: 'cut' });
    await engine.settle(['rpl']);
    const cut = await engine.inspect.getTask('rpl', 'cut');
    expect(cut.state).toBe('done');
    const shown = (cut.logs ?? []).map((l) => ({ attempt: l.attempt, length: l.line.length, end: l.line.slice(-23) }));
    expect({ shown, logsDropped: cut.logsDropped }).toEqual({ shown: [{ attempt: 1, length: 4096 + 22, end: 'y… (904 characters cut)' }], logsDropped: 1 });
    expect(cut.logs![0].line).toBe(`${'y'.repeat(4096)}… (904 characters cut)`);
  });

  it('bad input throws InvalidArgumentError in the handler and keeps nothing; the task goes on; late calls keep nothing', async () => {
    const engine = await start({ maxProgressBytes: 64 }, [Worker]);
    await engine.submit.submit('rp', { bad: true }, { id: 'bad' });
    await engine.settle(['rp']);
    expect(thrown).toHaveLength(6);
    expect(thrown.every((e) => e instanceof InvalidArgumentError)).toBe(true);
    expect((thrown as InvalidArgumentError[]).map((e) => e.argument)).toEqual(['progress', 'progress', 'progress', 'progress', 'line', 'line']);
    expect((thrown[3] as Error).message).toContain('maxProgressBytes');
    expect(await engine.inspect.getTask('rp', 'bad')).toEqual({ id: 'bad', type: 'rp', state: 'done', result: 'went on' });

    // a task's calls after its attempt ended: checked, and kept nowhere
    await engine.submit.submit('rp', { keep: true, lines: 1 }, { id: 'late' });
    await engine.settle(['rp']);
    expect(kept).toHaveLength(1);
    kept[0].log('after the end');
    kept[0].progress(99);
    expect(() => kept[0].log(7 as unknown as string)).toThrow(InvalidArgumentError);
    await engine.advance(400);
    expect(await engine.inspect.getTask('rp', 'late')).toEqual({ id: 'late', type: 'rp', state: 'done', result: 'ok', logs: [{ attempt: 1, at: expect.any(Number), line: '1:1' }] });
  });
});
