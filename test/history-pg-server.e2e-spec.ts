/**
 * The history writer under a real PostgreSQL server that is paused, killed or restarted (a private server of
 * this file's own, test/support/pg-server.ts: never the machine's PostgreSQL).
 *
 * Failure matrix cells (docs/failure-matrix.md, section 3):
 * - "PostgreSQL paused (SIGSTOP)": every process of the server stopped for longer than history's
 *   queryTimeoutMs while tasks run -> the tasks never wait for it (all of them run while it is stopped), the
 *   writer's queries fail after queryTimeoutMs; once SIGCONTed, the backlog is written by itself, one row
 *   per task, each task written once.
 * - "PostgreSQL restarted" (a real restart under a running writer): killed (SIGKILL to every process: crash
 *   recovery at the next start) or shut down (fast shutdown), started again 2 s later on the same port, while
 *   tasks are submitted and run all along -> every task's row lands, once, when it is back.
 */
import { Logger } from '@nestjs/common';
import { TaskHistoryService, type Task } from 'nestjs-distributed-queue';
import { testSchemaName } from './support/pg';
import { startPgServer, queryOn, type PgServerHandle } from './support/pg-server';
import { useStartedApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

const target = getTargets()[0];

const logged = (spy: jest.SpyInstance, pattern: RegExp): boolean => spy.mock.calls.some(([message]) => pattern.test(String(message)));

describe('history writer: its PostgreSQL paused, killed, restarted', () => {
  const start = useStartedApps();
  let pg: PgServerHandle;
  beforeAll(async () => {
    pg = await startPgServer();
  }, 90_000);
  afterEach(async () => {
    jest.restoreAllMocks();
    pg.resume();
    if (!pg.isRunning()) await pg.start();
  });
  afterAll(() => pg?.remove());

  /** The rows of a schema's history table (id, status, attempts). */
  const rowsOf = (schema: string) =>
    queryOn<{ id: string; status: string; reentry: number }>(pg.url, `SELECT id, status, reentry FROM "${schema}".dq_task_history ORDER BY id`);

  /** Waits until the table holds exactly `ids`, all done; returns the rows. */
  const allDone = (schema: string, ids: string[], message: string) =>
    waitFor(async () => {
      const rows = await rowsOf(schema);
      return rows.length >= ids.length && rows.every((r) => r.status === 'done') ? rows : null;
    }, { timeoutMs: 30_000, intervalMs: 200, message });

  it('paused (SIGSTOP) longer than queryTimeoutMs: tasks never wait for it; once resumed, the backlog is written by itself, one row per task', async () => {
    const schema = testSchemaName();
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const log = jest.spyOn(Logger.prototype, 'log');
    const done: string[] = [];
    const app = await start(
      {
        connection: target.connection, keyPrefix: uniquePrefix('hist-pgstop'), shutdownTimeoutMs: 1000,
        history: { connection: pg.url, schema, flushIntervalMs: 50, queryTimeoutMs: 1000 },
      },
      [workerClass('ps', { concurrency: 8 }, (task: Task) => void done.push(task.id))],
    );
    const before = Array.from({ length: 20 }, (_, i) => `before${i}`);
    await app.submit.submitMany('ps', before.map((id) => ({ id, payload: id })));
    await allDone(schema, before, 'the first tasks written while PostgreSQL answers');

    pg.pause();
    const during = Array.from({ length: 200 }, (_, i) => `during${i}`);
    await app.submit.submitMany('ps', during.slice(0, 100).map((id) => ({ id, payload: id })));
    for (const id of during.slice(100)) await app.submit.submit('ps', id, { id });
    await waitFor(() => during.every((id) => done.includes(id)), { timeoutMs: 20_000, message: 'every task ran while PostgreSQL is stopped' });
    // The writer's query got no answer and failed after queryTimeoutMs (PostgreSQL still stopped).
    await waitFor(() => logged(warn, /^history: copying failed/), { timeoutMs: 15_000, message: "the writer's query failed after queryTimeoutMs" });
    expect(pg.isRunning()).toBe(true);

    pg.resume();
    const all = [...before, ...during];
    const rows = await allDone(schema, all, 'the backlog written once PostgreSQL is resumed');
    expect(rows.map((r) => r.id).sort()).toEqual([...all].sort());
    expect(rows.filter((r) => r.reentry !== 1)).toEqual([]);
    expect(done.sort()).toEqual([...all].sort());
    // NOTE: logged once the pass that wrote the rows ends (its other streams copied too): a moment after them
    await waitFor(() => logged(log, /^history: copying again/), { timeoutMs: 10_000, message: 'the recovery logged' });
    // The service reads through the pool again.
    expect(await app.app.get(TaskHistoryService).getHistory('ps', 'during199')).toMatchObject({ status: 'done', payload: 'during199' });
  }, 60_000);

  it.each([
    ['killed (SIGKILL to every process)', () => pg.kill()],
    ['shut down (fast shutdown)', () => pg.stop()],
  ])('%s and started again under load: every event lands once when it is back', async (_how, down) => {
    const schema = testSchemaName();
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const done: string[] = [];
    const app = await start(
      {
        connection: target.connection, keyPrefix: uniquePrefix('hist-pgrestart'), shutdownTimeoutMs: 1000,
        history: { connection: pg.url, schema, flushIntervalMs: 50, queryTimeoutMs: 2000 },
      },
      [workerClass('pr', { concurrency: 8 }, (task: Task) => void done.push(task.id))],
    );
    const submitted: string[] = [];
    let submitting = true;
    const producer = (async () => {
      for (let i = 0; submitting; i++) {
        await app.submit.submit('pr', { i }, { id: `t${i}` });
        submitted.push(`t${i}`);
        await sleep(10);
      }
    })();
    await waitFor(async () => (await rowsOf(schema).catch(() => [])).length >= 20, { timeoutMs: 15_000, message: 'rows written before the restart' });
    await down();
    const downAt = submitted.length;
    await sleep(2000);
    await pg.start();
    const upAt = submitted.length;
    await sleep(1500);
    submitting = false;
    await producer;
    // Tasks were submitted and run while it was down.
    expect(upAt).toBeGreaterThan(downAt);
    expect(logged(warn, /^history: copying failed/)).toBe(true);
    await waitFor(() => submitted.every((id) => done.includes(id)), { timeoutMs: 20_000, message: 'every task ran' });
    const rows = await allDone(schema, submitted, 'every row written once PostgreSQL is back');
    expect(rows.map((r) => r.id).sort()).toEqual([...submitted].sort());
    expect(rows.filter((r) => r.reentry !== 1)).toEqual([]);
  }, 60_000);
});
