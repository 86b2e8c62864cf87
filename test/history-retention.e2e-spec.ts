/**
 * The retention of the task history in a running application (not only the store's purge).
 *
 * Failure matrix cell (docs/failure-matrix.md, section 3, "README: retention"): the writer's retention job
 * deletes the rows of tasks finished more than `retentionDays` ago, by itself: at start-up and then hourly.
 * The interval is not an option (hourly, fixed): the test makes the writer's hourly `setInterval` fire every
 * 300 ms instead (the only thing changed), and uses the lowest public knob, `retentionDays: 1`, with rows
 * whose times are moved two days back in PostgreSQL. Rows not finished (however old) and rows finished
 * recently stay.
 */
import { Logger } from '@nestjs/common';
import type { Task } from 'nestjs-distributed-queue';
import { PG_URL, pgQuery, tableRows, useSchemaNames } from './support/pg';
import { useStartedApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const target = getTargets()[0];
const HOUR_MS = 3_600_000;

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** Moves the rows of `idList` two days back: submitted, due, and (when finished) finished then. */
async function ageRows(schema: string, idList: string[]): Promise<void> {
  const rows = await pgQuery(
    `UPDATE "${schema}".dq_task_history SET create_time = now() - interval '2 days', updated_time = now() - interval '2 days',
       due_time = now() - interval '2 days', finished_time = CASE WHEN finished_time IS NULL THEN NULL ELSE now() - interval '2 days' END
     WHERE id = ANY($1) RETURNING id`,
    [idList],
  );
  expect(rows).toHaveLength(idList.length);
}

const statuses = async (schema: string): Promise<Record<string, string>> =>
  Object.fromEntries((await tableRows(schema)).map((r) => [r.id as string, r.status as string]));

describe('history retention in a running application', () => {
  const start = useStartedApps();
  const newSchema = useSchemaNames();
  afterEach(() => jest.restoreAllMocks());

  /** Starts an application with the history (retentionDays 1) and writes rows: old finished, old waiting, recent finished. */
  async function appWithRows(schema: string) {
    const app = await start(
      { connection: target.connection, keyPrefix: uniquePrefix('hist-retain'), history: { connection: PG_URL, schema, flushIntervalMs: 50, coalesceMs: 0, retentionDays: 1 } },
      [workerClass('rt', { concurrency: 4 }, (_task: Task) => undefined)],
    );
    const rows = { oldDone: ids('old-done', 5), oldWaiting: ids('old-waiting', 3), recentDone: ids('recent-done', 5) };
    await app.submit.submitMany('rt', [...rows.oldDone, ...rows.recentDone].map((id) => ({ id, payload: id })));
    await app.submit.submitMany('rt', rows.oldWaiting.map((id) => ({ id, payload: id, delay: 600_000 })));
    await waitFor(async () => {
      const found = await statuses(schema).catch(() => ({} as Record<string, string>));
      return [...rows.oldDone, ...rows.recentDone].every((id) => found[id] === 'done') && rows.oldWaiting.every((id) => found[id] === 'waiting');
    }, { timeoutMs: 15_000, message: 'the rows written' });
    await ageRows(schema, [...rows.oldDone, ...rows.oldWaiting]);
    return { app, rows };
  }

  it('the hourly job of a running application deletes the rows finished before retentionDays, and only those', async () => {
    const setInterval = global.setInterval as unknown as (fn: () => void, ms?: number, ...args: unknown[]) => NodeJS.Timeout;
    const hourly: number[] = [];
    jest.spyOn(global, 'setInterval').mockImplementation(((fn: () => void, ms?: number, ...rest: unknown[]) => {
      if (ms === HOUR_MS) hourly.push(ms);
      return setInterval(fn, ms === HOUR_MS ? 300 : ms, ...rest);
    }) as unknown as typeof global.setInterval);
    const log = jest.spyOn(Logger.prototype, 'log');
    const schema = newSchema();
    const { rows } = await appWithRows(schema);
    // The writer's own timer (its start-up run came before the rows were aged).
    expect(hourly).toEqual([HOUR_MS]);
    await waitFor(async () => {
      const found = await statuses(schema);
      return rows.oldDone.every((id) => !(id in found));
    }, {
      timeoutMs: 15_000, message: 'the old finished rows deleted by the timer',
    });
    expect(await statuses(schema)).toEqual({
      ...Object.fromEntries(rows.oldWaiting.map((id) => [id, 'waiting'])),
      ...Object.fromEntries(rows.recentDone.map((id) => [id, 'done'])),
    });
    expect(log.mock.calls.some(([message]) => /^history: 5 finished rows older than 1 days deleted$/.test(String(message)))).toBe(true);
  });

  it('an application starting deletes the rows finished before retentionDays at once', async () => {
    const schema = newSchema();
    const { app, rows } = await appWithRows(schema);
    await app.close();
    // Not the hourly timer: the run at start-up.
    await start({ connection: target.connection, keyPrefix: uniquePrefix('hist-retain2'), workers: false, types: { rt: {} }, history: { connection: PG_URL, schema, retentionDays: 1 } });
    await waitFor(async () => {
      const found = await statuses(schema);
      return rows.oldDone.every((id) => !(id in found));
    }, { timeoutMs: 15_000, message: 'the old finished rows deleted at start-up' });
    expect(await statuses(schema)).toEqual({
      ...Object.fromEntries(rows.oldWaiting.map((id) => [id, 'waiting'])),
      ...Object.fromEntries(rows.recentDone.map((id) => [id, 'done'])),
    });
  });
});
