import { TaskHistoryService } from 'nestjs-distributed-queue';
import { killAllChildren, spawnChild } from './support/child';
import { PG_URL, pgQuery, useSchemaNames } from './support/pg';
import { useQueueApps, workerClass, type QueueApp } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

/*
 * The history writer holds back tasks that have not finished within `coalesceMs` of their submit (so a short
 * task is written once), unless they are due after that window, and shows a running attempt. What is held
 * must survive the writer's death.
 */

const historyOf = (app: QueueApp): TaskHistoryService => app.app.get(TaskHistoryService);

/** The rows of a schema's history table by id: status (empty when the table does not exist yet). */
async function statuses(schema: string): Promise<Record<string, string>> {
  const rows = await pgQuery<{ id: string; status: string }>(`SELECT id, status FROM "${schema}".dq_task_history`).catch(() => []);
  return Object.fromEntries(rows.map((r) => [r.id, r.status]));
}

describe.each(getTargets().map((t) => [t.name, t] as const))('history writer: holding back and running rows on %s', (_name, target) => {
  const { start } = useQueueApps(target);
  const newSchema = useSchemaNames();
  afterEach(() => killAllChildren());

  it('with recordStarts, a running attempt shows as running, with its start and machine; then done', async () => {
    const schema = newSchema();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const Worker = workerClass('run', {}, () => gate);
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('hist-run'), history: { connection: PG_URL, schema, flushIntervalMs: 50, recordStarts: true } }, [Worker]);
    const history = historyOf(app);
    await app.submit.submit('run', { n: 1 }, { id: 'slow' });
    const running = await waitFor(async () => {
      await history.flush();
      const row = await history.getHistory('run', 'slow');
      return row?.status === 'running' ? row : null;
    }, { timeoutMs: 10_000, message: 'the running row' });
    expect(running).toMatchObject({ attempts: 1, finishedAt: null, payload: { n: 1 } });
    expect(running.machine).toMatch(/\/\d+$/);
    expect(running.startedAt! >= running.createdAt!).toBe(true);
    release();
    const done = await waitFor(async () => {
      await history.flush();
      const row = await history.getHistory('run', 'slow');
      return row?.status === 'done' ? row : null;
    }, { timeoutMs: 10_000, message: 'the done row' });
    expect(done.startedAt).toBe(running.startedAt);
  });

  it('a task not finished within coalesceMs is held back (a later one that finished is written), flush writes it', async () => {
    const schema = newSchema();
    const Worker = workerClass('hold', {}, () => undefined);
    const app = await start(
      { connection: target.connection, keyPrefix: uniquePrefix('hist-hold'), history: { connection: PG_URL, schema, flushIntervalMs: 50, coalesceMs: 60_000 } },
      [Worker],
    );
    await app.submit.submit('hold', {}, { id: 'later', delay: 30_000 });
    await app.submit.submit('hold', {}, { id: 'now' });
    await waitFor(async () => (await statuses(schema)).now === 'done', { timeoutMs: 10_000, message: 'the finished task written' });
    expect((await statuses(schema)).later).toBeUndefined();
    await historyOf(app).flush();
    expect(await statuses(schema)).toEqual({ later: 'waiting', now: 'done' });
  });

  it('a task due after the coalesceMs window cannot end within it: it is written at once, waiting', async () => {
    const schema = newSchema();
    const Worker = workerClass('far', {}, () => undefined);
    const app = await start(
      { connection: target.connection, keyPrefix: uniquePrefix('hist-far'), history: { connection: PG_URL, schema, flushIntervalMs: 50, coalesceMs: 5_000 } },
      [Worker],
    );
    await app.submit.submit('far', { n: 1 }, { id: 'far', delay: 60_000 });
    await app.submit.submit('far', {}, { id: 'soon', delay: 1_000 });
    const t0 = Date.now();
    await waitFor(async () => (await statuses(schema)).far === 'waiting', { timeoutMs: 4_000, message: 'the far task written before the window ends' });
    expect(Date.now() - t0).toBeLessThan(4_000);
    // the task due within the window is held until it ends: written once, done
    await waitFor(async () => (await statuses(schema)).soon === 'done', { timeoutMs: 10_000, message: 'the task due soon written done' });
    expect(await historyOf(app).getHistory('far', 'far')).toMatchObject({ status: 'waiting', payload: { n: 1 }, delayMs: 60_000 });
  });

  it('the writer SIGKILLed while it holds tasks back: another writer writes them, each once', async () => {
    const schema = newSchema();
    const prefix = uniquePrefix('hist-kill');
    const child = spawnChild('test/fixtures/worker-app.ts', {
      DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: 'hk', DQ_CONCURRENCY: '4',
      DQ_HISTORY: JSON.stringify({ connection: PG_URL, schema, flushIntervalMs: 50, coalesceMs: 60_000 }),
    });
    await child.waitForMessage((m) => m.type === 'ready', 30_000);
    const producer = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { hk: {} } });
    // NOTE: the child is ready once its writer runs (its flag is raised): submits now carry their payload.
    const held = Array.from({ length: 20 }, (_, i) => ({ id: `held-${i}`, payload: { i }, delay: 30_000 }));
    await producer.submit.submitMany('hk', held);
    await producer.submit.submit('hk', { marker: true }, { id: 'marker' });
    await waitFor(async () => (await statuses(schema)).marker === 'done', { timeoutMs: 15_000, message: "the child's writer copied past the held tasks" });
    expect(Object.keys(await statuses(schema))).toEqual(['marker']);
    child.kill('SIGKILL');
    await child.exited;
    const writer = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { hk: {} }, history: { connection: PG_URL, schema, flushIntervalMs: 50 } });
    // The dead writer's lease (15 s) has to run out before another instance takes the stream.
    const rows = await waitFor(async () => {
      await historyOf(writer).flush();
      const found = await statuses(schema);
      return Object.keys(found).length === 21 ? found : null;
    }, { timeoutMs: 30_000, message: 'the held tasks written by the next writer' });
    expect(rows).toEqual({ marker: 'done', ...Object.fromEntries(held.map((t) => [t.id, 'waiting'])) });
    const records = await Promise.all(held.map((t) => historyOf(writer).getHistory('hk', t.id)));
    expect(records.map((r) => r?.payload)).toEqual(held.map((t) => t.payload));
  }, 60_000);
});
