import { randomBytes } from 'crypto';
import { Client } from 'pg';
import { PgHistoryStore, type HistoryEvent, type PgHistoryOptions } from 'nestjs-distributed-queue/history';

/** The machine's PostgreSQL (trust auth); DQ_TEST_PG_URL overrides it. */
export const PG_URL = process.env.DQ_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const PG_TARGET = { host: new URL(PG_URL).hostname, port: Number(new URL(PG_URL).port || 5432) };

/** A fresh schema name for one test (`dq_test_<random>`); the store creates it. */
export function testSchemaName(): string {
  return `dq_test_${randomBytes(5).toString('hex')}`;
}

/** Fresh schema names for a suite's applications (their history writers create them), dropped after each test. */
export function useSchemaNames(): () => string {
  const made: string[] = [];
  afterEach(async () => {
    for (const name of made.splice(0)) await pgQuery(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  });
  return () => {
    const name = testSchemaName();
    made.push(name);
    return name;
  };
}

/** Runs one statement on a connection of its own (bounded connect and query time). */
export async function pgQuery<R extends object = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new Client({ connectionString: PG_URL, connectionTimeoutMillis: 5000, query_timeout: 30_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Opens stores each in its schema (a fresh one unless given); after each test closes them and drops their
 * schemas.
 */
export function useHistoryStores(): (schema?: string, options?: Partial<PgHistoryOptions>) => Promise<PgHistoryStore> {
  const schemas = new Set<string>();
  const stores: PgHistoryStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    for (const name of schemas) await pgQuery(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    schemas.clear();
  });
  return async (schema = testSchemaName(), options = {}) => {
    schemas.add(schema);
    const store = await PgHistoryStore.open({ connection: PG_URL, schema, ...options });
    stores.push(store);
    return store;
  };
}

/** Every row of a history table, all columns, in key order (to compare tables). */
export function tableRows(schema: string, table = 'dq_task_history'): Promise<Record<string, unknown>[]> {
  return pgQuery(`SELECT * FROM "${schema}"."${table}" ORDER BY topic COLLATE "C", id COLLATE "C"`);
}

/** Builds events with increasing entry ids (one stream's order). */
export function eventMaker(start = 1_700_000_000_000): (event: HistoryEvent['event'], fields: Partial<HistoryEvent> & { id: string }) => HistoryEvent {
  let at = start;
  return (event, fields) => {
    at += 1;
    return { event, type: 'mail', at, entryId: `${at}-0`, ...fields };
  };
}

/** The events of `tasks` tasks living submitted → started → retrying → started → completed. */
export function lifeEvents(tasks: number, make = eventMaker()): HistoryEvent[] {
  const steps: [HistoryEvent['event'], Partial<HistoryEvent>][] = [
    ['submitted', { dueAt: 1_700_000_100_000, delayMs: 100_000, body: '{"n":1}', timeoutMs: 30_000 }],
    ['started', { attempt: 1, machine: 'host-a/1' }],
    ['retrying', { attempt: 1, error: { name: 'Error', message: 'boom' } }],
    ['started', { attempt: 2, machine: 'host-b/2' }],
    ['completed', { attempt: 2 }],
  ];
  const events: HistoryEvent[] = [];
  for (const [event, fields] of steps) {
    for (let i = 0; i < tasks; i++) events.push(make(event, { ...fields, id: `task-${i}`, type: i % 2 ? 'sms' : 'mail' }));
  }
  return events;
}
