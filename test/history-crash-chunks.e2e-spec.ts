/**
 * The history writer killed between the statements of one batch.
 *
 * Failure matrix cell (docs/failure-matrix.md, section 3, "Crash: between the statements of a batch over
 * FOLD_CHUNK_CHARS"): a batch whose entries hold more than FOLD_CHUNK_CHARS (8 MB) of text is written as
 * several fold statements in one transaction (W3), then the stream's position. The writer (a child process,
 * test/support/history-writer-app.ts, crash hook DQ_DIE_BETWEEN_CHUNKS) is SIGKILLed after the first statement
 * ran, before the second is sent. PostgreSQL rolls the transaction back: no row of the batch and no position
 * are left. The next writer copies the batch from the recorded position: every task has its row once, whole
 * (its 1 MB payload), done, attempt 1. Both targets.
 */
import { EventStreams } from 'nestjs-distributed-queue/events/event-streams';
import { TaskHistoryService, type Task } from 'nestjs-distributed-queue';
import { killAllChildren, spawnChild } from './support/child';
import { PG_URL, pgQuery, tableRows, useSchemaNames } from './support/pg';
import { keysOf, useQueueApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

/** Tasks of ~1 MB payloads: their submits' entries hold 12 MB of text, more than one statement's 8 MB. */
const TASKS = 12;
const PAYLOAD = 'x'.repeat(1_000_000);

describe.each(getTargets().map((t) => [t.name, t] as const))('history writer killed between the statements of one batch, on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  const newSchema = useSchemaNames();
  afterEach(() => killAllChildren());

  it('SIGKILL after the first of two fold statements: nothing of the batch is left; the next writer writes every row once, whole', async () => {
    const schema = newSchema();
    const prefix = uniquePrefix('hist-chunks');
    const type = 'big';
    const stream = keysOf(prefix, type).log;
    const done: string[] = [];
    const app = await start({ connection: target.connection, keyPrefix: prefix }, [workerClass(type, { concurrency: 4 }, (task: Task) => void done.push(task.id))]);
    // The events are appended while a writer's flag is up: raised here, so that every task's life is in the
    // stream before the writer reads it (its first pass then takes them all in one batch).
    const streams = app.app.get(EventStreams);
    await streams.raiseFlags(await streams.ofTypes([type]), 'outcomes');
    const ids = Array.from({ length: TASKS }, (_, i) => `t${i}`);
    for (const id of ids) await app.submit.submit(type, PAYLOAD, { id });
    await waitFor(() => done.length === TASKS, { timeoutMs: 20_000, message: 'every task ran' });

    const writer = spawnChild('test/support/history-writer-app.ts', {
      DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: type, DQ_DIE_BETWEEN_CHUNKS: '1',
      DQ_HISTORY: JSON.stringify({ connection: PG_URL, schema, flushIntervalMs: 200 }),
    });
    const between = await writer.waitForMessage((m) => m.type === 'between', 30_000);
    expect((await writer.exited).signal).toBe('SIGKILL');
    // The first statement held part of the batch (not all of it: the second was to write the rest).
    expect(between.entries).toBeGreaterThan(0);
    expect(between.entries).toBeLessThan(await redis().xlen(stream));
    // Rolled back: no row, no position (the dead connection's transaction never committed).
    await waitFor(async () => (await pgQuery<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%json_array_elements_text($1::json)%' AND state <> 'idle' AND pid <> pg_backend_pid()`))[0].n === 0, {
      timeoutMs: 10_000, message: 'the killed writer\'s backend gone',
    });
    expect(await tableRows(schema)).toEqual([]);
    expect(await pgQuery(`SELECT last_id FROM "${schema}".dq_task_history_positions WHERE stream = $1`, [stream])).toEqual([]);

    // The next writer. The stream's lease is the dead writer's until it expires: let it go now.
    await redis().del(`${stream}:writer`);
    const next = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { [type]: {} }, history: { connection: PG_URL, schema, flushIntervalMs: 50 } });
    const history = next.app.get(TaskHistoryService);
    const rows = await waitFor(async () => {
      await history.flush({ timeoutMs: 20_000 });
      const found = await tableRows(schema);
      return found.length === TASKS && found.every((r) => r.status === 'done') ? found : null;
    }, { timeoutMs: 40_000, message: 'every task done in the history' });
    expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
    expect(rows.filter((r) => r.reentry !== 1)).toEqual([]);
    for (const row of rows) expect(row.body).toBe(JSON.stringify(PAYLOAD));
  }, 90_000);
});
