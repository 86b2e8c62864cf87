/**
 * The history writer killed between its PostgreSQL commit and its trim of the stream.
 *
 * Failure matrix cell (docs/failure-matrix.md, section 3, "Crash: between W3 and W4 (committed, not
 * trimmed)"): the writer (a child process, test/support/history-writer-app.ts, crash hook
 * DQ_DIE_AFTER_COMMIT) is SIGKILLed right after the transaction that wrote a batch of finished tasks and the
 * stream's new position (W3), before its `XTRIM` (W4). The stream still holds those entries. The next writer
 * goes on from the recorded position: the committed rows stay exactly as they were, every task has one row,
 * written once (attempt 1), and the tasks after the crash are written (the next writer's position moves past
 * the dead one's), and the entries the dead writer left untrimmed are trimmed by the next one (no fleet
 * listener follows the stream: the writer keeps none of what it copied). Both targets.
 */
import { TaskHistoryService, type Task } from 'nestjs-distributed-queue';
import { killAllChildren, spawnChild } from './support/child';
import { PG_URL, pgQuery, tableRows, useSchemaNames } from './support/pg';
import { keysOf, useQueueApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

interface Committed {
  type: 'committed';
  stream: string;
  position: string;
  rows: { id: string; status: string }[];
}

/** -1, 0 or 1 as stream entry id `a` comes before, is, or comes after `b`. */
function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt);
  const [bm, bs] = b.split('-').map(BigInt);
  return am !== bm ? (am < bm ? -1 : 1) : as === bs ? 0 : as < bs ? -1 : 1;
}

describe.each(getTargets().map((t) => [t.name, t] as const))('history writer killed after its commit, before its trim, on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  const newSchema = useSchemaNames();
  afterEach(() => killAllChildren());

  it('SIGKILL after the commit, before XTRIM: the next writer goes on from the recorded position, the rows stay the same, each task once', async () => {
    const schema = newSchema();
    const prefix = uniquePrefix('hist-w3w4');
    const type = 'ct';
    const stream = keysOf(prefix, type).log;
    const done: string[] = [];
    // The worker has no history: the events are appended while a writer's flag is up (the child's, then the next writer's).
    await start({ connection: target.connection, keyPrefix: prefix }, [workerClass(type, { concurrency: 16 }, (task: Task) => void done.push(task.id))]);
    // It dies after the commit that brings its rows of done tasks to 200 or more (of 250, finished soon after
    // their submits: written once, as done).
    const writer = spawnChild('test/support/history-writer-app.ts', {
      DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: type, DQ_DIE_AFTER_COMMIT: '200',
      DQ_HISTORY: JSON.stringify({ connection: PG_URL, schema, flushIntervalMs: 200 }),
    });
    await writer.waitForMessage((m) => m.type === 'ready', 30_000);
    const producer = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { [type]: {} } });
    const first = Array.from({ length: 250 }, (_, i) => `a${i}`);
    // One stream entry per submit call.
    for (const [i, id] of first.entries()) await producer.submit.submit(type, { i }, { id });

    const committed: Committed = await writer.waitForMessage((m) => m.type === 'committed', 30_000);
    const exit = await writer.exited;
    expect(exit.signal).toBe('SIGKILL');
    expect(committed.stream).toBe(stream);
    expect(committed.rows.filter((r) => r.status === 'done').length).toBeGreaterThan(0);
    // The commit landed (rows and position; earlier batches' rows too); the stream still holds what it copied.
    const [position] = await pgQuery<{ last_id: string }>(`SELECT last_id FROM "${schema}".dq_task_history_positions WHERE stream = $1`, [stream]);
    expect(position.last_id).toBe(committed.position);
    expect((await redis().xrange(stream, committed.position, committed.position)).length).toBe(1);
    const atCrash = await tableRows(schema);
    expect(atCrash.filter((r) => r.status === 'done').length).toBeGreaterThanOrEqual(200);
    for (const row of committed.rows) expect(atCrash.find((r) => r.id === row.id)?.status).toBe(row.status);

    // The next writer, then more tasks. Its stream's lease is the dead writer's until it expires (15 s): gone now.
    const next = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { [type]: {} }, history: { connection: PG_URL, schema, flushIntervalMs: 50 } });
    await redis().del(`${stream}:writer`);
    const second = Array.from({ length: 50 }, (_, i) => `b${i}`);
    for (const id of second) await producer.submit.submit(type, { id }, { id });
    const all = [...first, ...second];
    await waitFor(() => all.every((id) => done.includes(id)), { timeoutMs: 20_000, message: 'every task ran' });
    const history = next.app.get(TaskHistoryService);
    const rows = await waitFor(async () => {
      await history.flush({ timeoutMs: 10_000 });
      const found = await tableRows(schema);
      return found.length === all.length && found.every((r) => r.status === 'done') ? found : null;
    }, { timeoutMs: 30_000, message: 'every task done in the history' });

    expect(rows.map((r) => r.id).sort()).toEqual([...all].sort());
    expect(rows.filter((r) => r.reentry !== 1)).toEqual([]);
    // What the dead writer committed was not written again: those rows are exactly as they were.
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const row of atCrash.filter((r) => r.status === 'done')) expect(byId.get(row.id as string)).toEqual(row);
    expect(compareIds((await pgQuery<{ last_id: string }>(`SELECT last_id FROM "${schema}".dq_task_history_positions WHERE stream = $1`, [stream]))[0].last_id, committed.position)).toBe(1);
    // What the dead writer committed but did not trim is gone from the stream now.
    expect(await redis().xrange(stream, '-', committed.position)).toEqual([]);
  }, 60_000);
});
