import * as net from 'net';
import { HistorySchemaError, InvalidArgumentError, InvalidOptionsError } from 'nestjs-distributed-queue';
import { PgHistoryStore, type HistoryEvent, type TaskHistoryRecord } from 'nestjs-distributed-queue/history';
import { HistoryTableNames, historyTableNames } from 'nestjs-distributed-queue/history/pg-history.options';
import { HISTORY_MIGRATIONS, migrateHistorySchema } from 'nestjs-distributed-queue/history/pg-history.schema';
import { Pool } from 'pg';
import { eventMaker, lifeEvents, PG_URL, pgQuery, tableRows, testSchemaName, useHistoryStores } from './support/pg';

const openStore = useHistoryStores();

describe('PgHistoryStore: schema', () => {
  it('creates the history, positions and version tables with their indexes, at the newest version', async () => {
    const store = await openStore();
    const schema = store.names.schema!;
    const tables = await pgQuery<{ table_name: string }>(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
      [schema],
    );
    expect(tables.map((t) => t.table_name)).toEqual(['dq_task_history', 'dq_task_history_positions', 'dq_task_history_schema']);
    const indexes = await pgQuery<{ indexdef: string }>('SELECT indexdef FROM pg_indexes WHERE schemaname = $1', [schema]);
    const defs = indexes.map((i) => i.indexdef).join('\n');
    expect(defs).toMatch(/dq_task_history_pkey .*\(topic, id\)/);
    expect(defs).toMatch(/dq_task_history_by_status .*\(topic, status, create_time\)/);
    expect(defs).toMatch(/dq_task_history_finished .*\(finished_time\) WHERE/);
    expect(defs).toMatch(/dq_task_history_by_flow .*\(flow_id, create_time, topic, id\) WHERE \(flow_id IS NOT NULL\)/);
    expect(await pgQuery(`SELECT version FROM "${schema}".dq_task_history_schema`)).toEqual([{ version: HISTORY_MIGRATIONS.length }]);
  });

  it('opens an existing schema again, and two instances opening at once both succeed', async () => {
    const schema = testSchemaName();
    const [a, b] = await Promise.all([openStore(schema), openStore(schema)]);
    await a.apply('s', [], '1-0');
    const again = await openStore(schema);
    expect(await again.position('s')).toBe('1-0');
    expect(await b.position('s')).toBe('1-0');
    expect(await pgQuery(`SELECT version FROM "${schema}".dq_task_history_schema`)).toEqual([{ version: HISTORY_MIGRATIONS.length }]);
  });

  it('migrates an older version with the steps after it, and then refuses it as newer than this code', async () => {
    const store = await openStore();
    const names: HistoryTableNames = store.names;
    await store.apply('s', lifeEvents(1), '9-0');
    const before = await tableRows(names.schema!);
    // A next step as a release would append it: a column for the task's tenant.
    const next = (n: HistoryTableNames): string[] => [`ALTER TABLE ${n.history} ADD COLUMN tenant text`];
    const pool = new Pool({ connectionString: PG_URL, connectionTimeoutMillis: 5000 });
    const client = await pool.connect();
    try {
      expect(await migrateHistorySchema(client, names, [...HISTORY_MIGRATIONS, next])).toBe(HISTORY_MIGRATIONS.length + 1);
      expect(await migrateHistorySchema(client, names, [...HISTORY_MIGRATIONS, next])).toBe(HISTORY_MIGRATIONS.length + 1);
    } finally {
      client.release();
      await pool.end();
    }
    expect(await tableRows(names.schema!)).toEqual(before.map((row) => ({ ...row, tenant: null })));
    const newer = HISTORY_MIGRATIONS.length + 1;
    expect(await pgQuery(`SELECT version FROM ${names.version}`)).toEqual([{ version: newer }]);

    const refused = PgHistoryStore.open({ connection: PG_URL, schema: names.schema });
    await expect(refused).rejects.toThrow(HistorySchemaError);
    await expect(refused).rejects.toThrow(
      `Task history table ${names.schema}.dq_task_history has schema version ${newer}; this version of the library knows up to version ${HISTORY_MIGRATIONS.length}`,
    );
  });

  it('a table of version 3 gains the logs column at start-up (version 4): its rows kept without lines until an event brings some', async () => {
    const schema = testSchemaName();
    const names = historyTableNames(undefined, schema);
    const pool = new Pool({ connectionString: PG_URL, connectionTimeoutMillis: 5000 });
    const client = await pool.connect();
    try {
      expect(await migrateHistorySchema(client, names, HISTORY_MIGRATIONS.slice(0, 3))).toBe(3);
      await client.query(
        `INSERT INTO ${names.history} (topic, id, status, submitted, reentry, result, create_time, updated_time, last_entry)
         VALUES ('mail', 'old', 'retrying', true, 1, null, now(), now(), '1-0')`,
      );
    } finally {
      client.release();
      await pool.end();
    }
    const store = await openStore(schema);
    expect(HISTORY_MIGRATIONS.length).toBe(4);
    expect(await pgQuery(`SELECT version FROM ${names.version}`)).toEqual([{ version: 4 }]);
    const old = await store.getHistory('mail', 'old');
    expect(old).toMatchObject({ status: 'retrying', attempts: 1 });
    expect(old).not.toHaveProperty('logs');
    const done = eventMaker(Date.now())('completed', { id: 'old', attempt: 2, logs: '0\n[2,5,"after the upgrade"]' });
    await store.apply('s', [done], done.entryId);
    expect((await store.getHistory('mail', 'old'))?.logs).toEqual([{ attempt: 2, at: 5, line: 'after the upgrade' }]);
  });

  it('fails fast naming history.connection when the server cannot be reached', async () => {
    const port = await closedPort();
    const started = Date.now();
    const opening = PgHistoryStore.open({ connection: `postgres://postgres@127.0.0.1:${port}/test` });
    await expect(opening).rejects.toThrow(InvalidOptionsError);
    await expect(opening).rejects.toMatchObject({ option: 'history.connection', message: expect.stringMatching(/ECONNREFUSED/) });
    expect(Date.now() - started).toBeLessThan(6000);
    const noDb = PgHistoryStore.open({ connection: PG_URL.replace(/\/test$/, '/no_such_db_here') });
    await expect(noDb).rejects.toMatchObject({ option: 'history.connection', message: expect.stringMatching(/no_such_db_here/) });
  });

  it('refuses a table or schema that is not a plain identifier, as a rejection', async () => {
    const bad = PgHistoryStore.open({ connection: PG_URL, table: 'x; drop table y' });
    await expect(bad).rejects.toMatchObject({ name: 'InvalidOptionsError', option: 'history.table' });
    expect(() => historyTableNames('ok', 'Bad-Schema')).toThrow(InvalidOptionsError);
  });
});

describe('PgHistoryStore: apply', () => {
  it("keeps a task's row at its latest state, across batches", async () => {
    const store = await openStore();
    const events = lifeEvents(1);
    await store.apply('mail-stream', events.slice(0, 3), events[2].entryId);
    expect(await store.getHistory('mail', 'task-0')).toMatchObject({ status: 'retrying', attempts: 1, machine: 'host-a/1' });
    await store.apply('mail-stream', events.slice(3), events[4].entryId);
    const [submitted, , , started, completed] = events;
    expect(await store.getHistory('mail', 'task-0')).toEqual<TaskHistoryRecord>({
      type: 'mail',
      id: 'task-0',
      status: 'done',
      attempts: 2,
      delayMs: 100_000,
      timeoutMs: 30_000,
      payload: { n: 1 },
      key: null,
      partition: null,
      flowId: null,
      lastError: { name: 'Error', message: 'boom' },
      machine: 'host-b/2',
      createdAt: submitted.at,
      dueAt: 1_700_000_100_000,
      startedAt: started.at,
      finishedAt: completed.at,
      updatedAt: completed.at,
    });
    expect(await store.position('mail-stream')).toBe(completed.entryId);
    expect(await store.position('other')).toBeNull();
  });

  it('records dead and cancelled tasks, ordered keys, and tasks whose submission it never saw', async () => {
    const store = await openStore();
    const make = eventMaker();
    const events = [
      make('submitted', { id: 'd', key: 'acct-1', partition: 5, body: 'not json' }),
      make('started', { id: 'd', attempt: 1, machine: 'm' }),
      make('dead', { id: 'd', attempt: 1, error: { name: 'TaskTimeoutError', message: 'late' } }),
      make('submitted', { id: 'c' }),
      make('cancelled', { id: 'c' }),
      make('started', { id: 'old', attempt: 3, machine: 'm2' }),
      make('recovered', { id: 'old' }),
    ];
    await store.apply('s', events, events[6].entryId);
    expect(await store.getHistory('mail', 'd')).toMatchObject({
      status: 'dead', attempts: 1, key: 'acct-1', partition: 5, payload: undefined,
      lastError: { name: 'TaskTimeoutError', message: 'late' }, finishedAt: events[2].at,
    });
    expect(await store.getHistory('mail', 'c')).toMatchObject({ status: 'cancelled', attempts: 0, finishedAt: events[4].at });
    expect(await store.getHistory('mail', 'old')).toMatchObject({
      status: 'waiting', attempts: 3, machine: 'm2', createdAt: events[5].at, startedAt: events[5].at, delayMs: null,
    });
    expect(await store.getHistory('mail', 'nope')).toBeNull();
  });

  it("a submit copied after its task's later events (another stream: a delayed ordered task) fills the row in, keeping its later state", async () => {
    const store = await openStore();
    const at = 1_700_000_000_000;
    const submitted: HistoryEvent = { event: 'submitted', type: 'ord', id: 'd', at, entryId: `${at}-0`, dueAt: at + 1500, delayMs: 1500, body: '{"n":1}', key: 'k' };
    const completed: HistoryEvent = {
      event: 'completed', type: 'ord', id: 'd', at: at + 1700, entryId: `${at + 1700}-0`, attempt: 1, startedAt: at + 1600, machine: 'm1', key: 'k', partition: 2,
    };
    // The partition's stream copied first (another writer, or the delay queue's stream behind).
    await store.apply('partition-2', [completed], completed.entryId);
    await store.apply('delay', [submitted], submitted.entryId);
    const expected = {
      status: 'done', attempts: 1, createdAt: at, dueAt: at + 1500, delayMs: 1500, payload: { n: 1 }, key: 'k', partition: 2,
      machine: 'm1', startedAt: at + 1600, finishedAt: at + 1700, updatedAt: at + 1700,
    };
    expect(await store.getHistory('ord', 'd')).toMatchObject(expected);
    // Applied again, in either order, nothing changes.
    await store.apply('delay', [submitted], submitted.entryId);
    await store.apply('partition-2', [completed], completed.entryId);
    expect(await store.getHistory('ord', 'd')).toMatchObject(expected);
  });

  it("keeps a task's latest log lines: a later event's replace them, one without leaves them, an older batch again changes nothing", async () => {
    const store = await openStore();
    const make = eventMaker();
    const first = '0\n[1,10,"one"]';
    const second = '2\n[1,10,"one"]\n[2,20,"two"]';
    const batch1 = [make('submitted', { id: 'l' }), make('started', { id: 'l', attempt: 1 }), make('retrying', { id: 'l', attempt: 1, logs: first })];
    await store.apply('s', batch1, batch1[2].entryId);
    expect(await store.getHistory('mail', 'l')).toMatchObject({ status: 'retrying', logs: [{ attempt: 1, at: 10, line: 'one' }] });
    const started = make('started', { id: 'l', attempt: 2 });
    await store.apply('s', [started], started.entryId);
    expect((await store.getHistory('mail', 'l'))?.logs).toEqual([{ attempt: 1, at: 10, line: 'one' }]);
    const completed = make('completed', { id: 'l', attempt: 2, logs: second });
    await store.apply('s', [completed], completed.entryId);
    const expected = { status: 'done', logs: [{ attempt: 1, at: 10, line: 'one' }, { attempt: 2, at: 20, line: 'two' }], logsDropped: 2 };
    expect(await store.getHistory('mail', 'l')).toMatchObject(expected);
    await store.apply('s', batch1, completed.entryId);
    expect(await store.getHistory('mail', 'l')).toMatchObject(expected);
    expect((await store.search({ type: 'mail' })).rows[0]).toMatchObject(expected);
  });

  it('a reused id restarts the row', async () => {
    const store = await openStore();
    const first = lifeEvents(1);
    await store.apply('s', first, first[4].entryId);
    const make = eventMaker(1_800_000_000_000);
    const again = make('submitted', { id: 'task-0', body: '{"n":2}' });
    await store.apply('s', [again], again.entryId);
    expect(await store.getHistory('mail', 'task-0')).toMatchObject({
      status: 'waiting', attempts: 0, payload: { n: 2 }, lastError: null, machine: null, startedAt: null, finishedAt: null,
      createdAt: again.at, delayMs: null,
    });
  });

  it('applies 5,000 events in one call; re-applying it, or an older batch, changes nothing', async () => {
    const store = await openStore();
    const schema = store.names.schema!;
    const events = lifeEvents(1000);
    const last = events[events.length - 1].entryId;
    await store.apply('big', events, last);
    const rows = await tableRows(schema);
    expect(rows).toHaveLength(1000);
    expect(new Set(rows.map((r) => `${r.status}/${r.reentry}/${r.machine}`))).toEqual(new Set(['done/2/host-b/2']));

    await store.apply('big', events, last);
    expect(await tableRows(schema)).toEqual(rows);
    await store.apply('big', events.slice(0, 2000), events[1999].entryId);
    expect(await tableRows(schema)).toEqual(rows);
    expect(await store.position('big')).toBe(last);
  });

  it('rejects malformed input without throwing synchronously', async () => {
    const store = await openStore();
    const good = lifeEvents(1);
    let call: Promise<void> | undefined;
    expect(() => (call = store.apply('s', good, 'not-an-id'))).not.toThrow();
    await expect(call).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'position' });
    await expect(store.apply('', good, '1-0')).rejects.toMatchObject({ argument: 'stream' });
    await expect(store.apply('s', [{ ...good[0], event: 'lost' as never }], '1-0')).rejects.toThrow(InvalidArgumentError);
    expect(await store.position('s')).toBeNull();
  });
});

/** A port nothing listens on (just released by the OS). */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
