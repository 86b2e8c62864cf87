import { Injectable } from '@nestjs/common';
import { OnTaskEvent, TaskHistoryService, type Task, type TaskEvent, type TaskHistoryRecord } from 'nestjs-distributed-queue';
import { PG_URL, useSchemaNames } from './support/pg';
import { keysOf, useQueueApps, workerClass, type QueueApp } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

/*
 * What a history row says, column by column, for the lives the other history tests do not cover: a
 * rescheduled task, ordered tasks retried in process, delayed ordered tasks (which wait in the route queue's
 * delay queue, another stream than their partition's), and the task's timeout (ttr).
 * Failure matrix: replicas/cluster (both targets: the delay queue's stream and the partitions' streams sit on
 * different masters, copied in any order); a reschedule to earlier and to later; fail-then-succeed and
 * fail-until-dead; a delayed ordered task's submit copied after its run (rows merge, whichever comes first);
 * a task's log lines (column `logs`): lines of a failed attempt and of the next that succeeds, in order; a
 * dead task's; a task that logs nothing has none; the read of the lines failing (a WRONGTYPE `:lg` key): the
 * pass fails and is retried, no row lost.
 * Crashes and outages: history-coalesce, history-close, history-outage, history-timeouts.
 */

const historyOf = (app: QueueApp): TaskHistoryService => app.app.get(TaskHistoryService);

/** Waits (bounded, flushing) until every row of `ids` satisfies `ready`; returns them in `ids`' order. */
async function rowsOf(app: QueueApp, type: string, ids: string[], ready: (r: TaskHistoryRecord) => boolean, message: string): Promise<TaskHistoryRecord[]> {
  const history = historyOf(app);
  return waitFor(async () => {
    await history.flush();
    const found = await Promise.all(ids.map((id) => history.getHistory(type, id)));
    return found.every((r) => r && ready(r)) ? (found as TaskHistoryRecord[]) : null;
  }, { timeoutMs: 20_000, message });
}

const finished = (r: TaskHistoryRecord): boolean => ['done', 'dead', 'cancelled'].includes(r.status);

describe.each(getTargets().map((t) => [t.name, t] as const))('history rows on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  const newSchema = useSchemaNames();

  it("a done task's row carries its result; a result not kept says its size; a task returning nothing has none", async () => {
    const schema = newSchema();
    const Worker = workerClass<{ r: string }>('res', {}, (task: Task<{ r: string }>) => {
      if (task.payload.r === 'big') return 'x'.repeat(300);
      return task.payload.r === 'none' ? undefined : { total: 42, tag: task.payload.r };
    });
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('hist-res'), maxResultBytes: 100, history: { connection: PG_URL, schema, flushIntervalMs: 50 } }, [Worker]);
    await app.submit.submitMany('res', [{ id: 'kept', payload: { r: 'a' } }, { id: 'big', payload: { r: 'big' } }, { id: 'none', payload: { r: 'none' } }]);
    const [kept, big, none] = await rowsOf(app, 'res', ['kept', 'big', 'none'], finished, 'the three rows done');
    expect(kept).toMatchObject({ status: 'done', result: { total: 42, tag: 'a' } });
    expect(big.resultNotKept).toBe(302);
    expect(big.result).toBeUndefined();
    expect(none.result).toBeUndefined();
    expect(none.resultNotKept).toBeUndefined();
  });

  it("a row keeps its task's log lines: every attempt's, in order; a dead task's; a failed read of them delays the copy, loses nothing", async () => {
    const schema = newSchema();
    const prefix = uniquePrefix('hist-logs');
    const Worker = workerClass<string>('lg', { maxAttempts: 2, backoff: { type: 'fixed', delayMs: 10 } }, (task) => {
      if (task.payload === 'quiet') return undefined;
      task.log(`${task.payload} a${task.attempt} first`);
      task.log(`${task.payload} a${task.attempt} second`);
      if (task.payload === 'dies' || task.attempt === 1) throw new Error(`fail ${task.attempt}`);
      return undefined;
    });
    const app = await start({ connection: target.connection, keyPrefix: prefix, history: { connection: PG_URL, schema, flushIntervalMs: 50 } }, [Worker]);
    await app.submit.submitMany('lg', [{ id: 'retried', payload: 'retried' }, { id: 'dies', payload: 'dies' }, { id: 'quiet', payload: 'quiet' }]);
    const [retried, dies, quiet] = await rowsOf(app, 'lg', ['retried', 'dies', 'quiet'], finished, 'the log rows finished');
    const lines = (r: TaskHistoryRecord) => r.logs?.map((l) => `${l.attempt}:${l.line}`);
    expect(retried).toMatchObject({ status: 'done', attempts: 2 });
    expect(lines(retried)).toEqual(['1:retried a1 first', '1:retried a1 second', '2:retried a2 first', '2:retried a2 second']);
    expect(retried.logs!.every((l, i, all) => typeof l.at === 'number' && (i === 0 || l.at >= all[i - 1].at))).toBe(true);
    expect(retried.logsDropped).toBeUndefined();
    expect(dies).toMatchObject({ status: 'dead', attempts: 2 });
    expect(lines(dies)).toEqual(['1:dies a1 first', '1:dies a1 second', '2:dies a2 first', '2:dies a2 second']);
    expect(quiet.status).toBe('done');
    expect(quiet.logs).toBeUndefined();

    // The lines' HASH made unreadable (WRONGTYPE): the writer's passes fail, nothing is lost; once it is
    // readable again the rows come, with their lines.
    // (getTask reads the lines too: the task's end is seen in the done list)
    const keys = keysOf(prefix, 'lg');
    const logsKey = `${keys.jobs}:lg`;
    const saved = await redis().hgetall(logsKey);
    await redis().set(logsKey, 'not a hash');
    await app.submit.submit('lg', 'quiet', { id: 'during' });
    await waitFor(async () => (await redis().lrange(keys.done, 0, -1)).includes('during'), { timeoutMs: 10_000, message: 'the task ran' });
    const flushed = await historyOf(app).flush({ timeoutMs: 1500 }).then(() => 'copied', (error: Error) => error.name);
    expect(flushed).toBe('HistoryFlushTimeoutError');
    expect(await historyOf(app).getHistory('lg', 'during')).toBeNull();
    // (at once: a pass between the two would read no lines)
    await redis().multi().del(logsKey).hset(logsKey, { ...saved, during: '0\n[1,1,"put back"]' }).exec();
    const [during] = await rowsOf(app, 'lg', ['during'], finished, 'the row copied once the lines are readable');
    expect(lines(during)).toEqual(['1:put back']);
  });

  it("a rescheduled task's row has the due time and delay of its reschedule: it never started before it was due", async () => {
    const schema = newSchema();
    const Worker = workerClass('resch', {}, () => undefined);
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('hist-resch'), history: { connection: PG_URL, schema, flushIntervalMs: 50 } }, [Worker]);
    await app.submit.submitMany('resch', [
      { id: 'sooner', payload: 1, delay: 3_600_000 },
      { id: 'later', payload: 2, delay: 0 },
    ]);
    await app.submit.cancel('resch', 'nothing'); // (unknown id: nothing happens)
    expect(await app.submit.reschedule('resch', 'sooner', { delay: 300 })).toBe(true);
    const [sooner] = await rowsOf(app, 'resch', ['sooner'], finished, 'the rescheduled task ran');
    expect(sooner.status).toBe('done');
    expect(sooner.delayMs!).toBeLessThan(60_000);
    expect(sooner.delayMs!).toBeGreaterThanOrEqual(0);
    expect(sooner.dueAt!).toBeLessThan(sooner.createdAt! + 60_000);
    expect(sooner.startedAt!).toBeGreaterThanOrEqual(sooner.dueAt!);

    // Later than asked at the submit: a waiting task moved to an hour from now shows that due time.
    await app.submit.submit('resch', 3, { id: 'moved', delay: 200_000 });
    expect(await app.submit.reschedule('resch', 'moved', { delay: 3_600_000 })).toBe(true);
    const [moved] = await rowsOf(app, 'resch', ['moved'], (r) => r.delayMs! > 3_000_000, 'the row of the task moved later');
    expect(moved).toMatchObject({ status: 'waiting', startedAt: null });
    expect(moved.dueAt! - moved.createdAt!).toBeGreaterThan(3_500_000);
  });

  it('ordered tasks: attempts counted, a retry recorded (its error stays after the success), dead after the last', async () => {
    const schema = newSchema();
    const Worker = workerClass<string>('oretry', { ordered: true, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 10 } }, (task: Task<string>) => {
      if (task.payload === 'always' || (task.payload === 'once' && task.attempt === 1)) throw new RangeError(`no ${task.payload} ${task.attempt}`);
    });
    // The history's record of an in-process retry is the history's own: fleet listeners hear ordered tasks'
    // completed and dead (with its failed) only, as the README's table says, whether a history writer runs or not.
    const fleet: string[] = [];
    @Injectable()
    class FleetListener {
      @OnTaskEvent('oretry', '*', { scope: 'fleet' })
      on(event: TaskEvent): void {
        fleet.push(`${event.task.id}:${event.event}`);
      }
    }
    const app = await start(
      { connection: target.connection, keyPrefix: uniquePrefix('hist-oretry'), route: routeTestOptions('hor', 'm1', 4), history: { connection: PG_URL, schema, flushIntervalMs: 50 } },
      [Worker, FleetListener],
    );
    const submitted = await app.submit.submitOrderedMany('oretry', ['ok', 'once', 'always'].map((payload, i) => ({ key: `k${i}`, payload, id: payload })));
    expect(submitted.map((s) => s.outcome)).toEqual(['queued', 'queued', 'queued']);
    const [ok, once, always] = await rowsOf(app, 'oretry', ['ok', 'once', 'always'], finished, 'ordered rows finished');
    expect(ok).toMatchObject({ status: 'done', attempts: 1, lastError: null });
    expect(once).toMatchObject({ status: 'done', attempts: 2, lastError: { name: 'RangeError', message: 'no once 1' } });
    expect(always).toMatchObject({ status: 'dead', attempts: 2, lastError: { name: 'RangeError', message: 'no always 2' } });
    expect(once.startedAt!).toBeGreaterThanOrEqual(once.createdAt!);
    await waitFor(() => fleet.filter((e) => /:(completed|dead)$/.test(e)).length === 3, { timeoutMs: 10_000, message: 'fleet heard the outcomes' });
    expect(fleet.filter((e) => e.startsWith('once:'))).toEqual(['once:completed']);
    expect(fleet.filter((e) => e.startsWith('always:'))).toEqual(['always:failed', 'always:dead']);
  });

  it('a delayed ordered task has its row from its submit: create time, delay and due time of the submit, then its run', async () => {
    const schema = newSchema();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const Worker = workerClass<number>('odelay', { ordered: true }, () => gate);
    const app = await start(
      { connection: target.connection, keyPrefix: uniquePrefix('hist-odelay'), route: routeTestOptions('hod', 'm1', 4), history: { connection: PG_URL, schema, flushIntervalMs: 50, coalesceMs: 0 } },
      [Worker],
    );
    const before = Date.now();
    const [result] = await app.submit.submitOrderedMany('odelay', [{ key: 'k', payload: 7, id: 'd1', delay: 1500 }]);
    expect(result.outcome).toBe('scheduled');
    const after = Date.now();
    // Before it is due, its row is there: waiting, from the submit.
    const [waiting] = await rowsOf(app, 'odelay', ['d1'], () => true, 'the row of the delayed ordered task before it is due');
    expect(waiting).toMatchObject({ status: 'waiting', payload: 7, key: 'k', delayMs: expect.any(Number), startedAt: null });
    expect(waiting.delayMs!).toBeGreaterThanOrEqual(1400);
    expect(waiting.delayMs!).toBeLessThanOrEqual(1500);
    // Clocks: the test's and Redis's are the same machine's.
    expect(waiting.createdAt!).toBeGreaterThanOrEqual(before - 50);
    expect(waiting.createdAt!).toBeLessThanOrEqual(after + 50);
    expect(waiting.dueAt).toBe(waiting.createdAt! + waiting.delayMs!);
    release();
    const [done] = await rowsOf(app, 'odelay', ['d1'], (r) => r.status === 'done', 'the delayed ordered task done');
    expect(done).toMatchObject({ createdAt: waiting.createdAt, delayMs: waiting.delayMs, dueAt: waiting.dueAt, payload: 7, key: 'k', attempts: 1, machine: 'm1' });
    expect(done.partition).toEqual(expect.any(Number));
    expect(done.startedAt!).toBeGreaterThanOrEqual(done.dueAt!);
  });

  it("ttr: every row has its type's handler timeout (delay and ordered types)", async () => {
    const schema = newSchema();
    const Plain = workerClass('ttrd', { timeoutMs: 7000 }, () => undefined);
    const Ordered = workerClass('ttro', { ordered: true, timeoutMs: 9000 }, () => undefined);
    const app = await start(
      {
        connection: target.connection, keyPrefix: uniquePrefix('hist-ttr'), route: routeTestOptions('htt', 'm1', 4),
        defaults: { timeoutMs: 4000 }, types: { ttrx: {} }, history: { connection: PG_URL, schema, flushIntervalMs: 50 },
      },
      [Plain, Ordered],
    );
    await app.submit.submit('ttrd', 1, { id: 'p' });
    await app.submit.submit('ttrx', 1, { id: 'x', delay: 600_000 });
    await app.submit.submitOrderedMany('ttro', [{ key: 'k', payload: 1, id: 'o' }]);
    const [p] = await rowsOf(app, 'ttrd', ['p'], finished, 'delay row');
    const [o] = await rowsOf(app, 'ttro', ['o'], finished, 'ordered row');
    const [x] = await rowsOf(app, 'ttrx', ['x'], () => true, 'declared type row');
    expect(p.timeoutMs).toBe(7000);
    expect(o.timeoutMs).toBe(9000);
    expect(x.timeoutMs).toBe(4000);
  });
});
