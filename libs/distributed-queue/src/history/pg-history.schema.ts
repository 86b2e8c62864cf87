import type { PoolClient } from 'pg';
import { HISTORY_STATUSES } from './history-event';
import { HistorySchemaError } from '../errors';
import type { HistoryTableNames } from './pg-history.options';

/** One step of the schema: the statements that bring version `i` to `i + 1` (its index in the list + 1). */
export type HistoryMigration = (names: HistoryTableNames) => string[];

/** The statuses a row can have (a CHECK constraint keeps the table to them). */
export { HISTORY_STATUSES, type HistoryStatus } from './history-event';

const v1: HistoryMigration = (n) => [
  `CREATE TABLE ${n.history} (
    topic          text        NOT NULL,
    id             text        NOT NULL,
    status         text        NOT NULL CHECK (status IN (${HISTORY_STATUSES.map((s) => `'${s}'`).join(', ')})),
    submitted      boolean     NOT NULL,
    reentry        int,
    delay_ms       bigint,
    ttr_ms         bigint,
    body           text,
    ordering_key   text,
    partition      int,
    last_error     jsonb,
    machine        text,
    create_time    timestamptz NOT NULL,
    due_time       timestamptz,
    execution_time timestamptz,
    finished_time  timestamptz,
    updated_time   timestamptz NOT NULL,
    last_entry     text        NOT NULL,
    PRIMARY KEY (topic, id)
  )`,
  `CREATE INDEX ${n.byStatusIndex} ON ${n.history} (topic, status, create_time)`,
  `CREATE INDEX ${n.finishedIndex} ON ${n.history} (finished_time) WHERE finished_time IS NOT NULL`,
  `CREATE TABLE ${n.positions} (
    stream       text        PRIMARY KEY,
    last_id      text        NOT NULL,
    updated_time timestamptz NOT NULL
  )`,
];

/**
 * Version 2: `flow_id`, the flow of a flow node's row (its task id is `&<flow id>:<ref>`), filled as rows are
 * written; null for any other task. Adding a nullable column rewrites nothing; the index holds flow rows only.
 * Rows written before the upgrade keep null (ids starting with `&` were anybody's before flows: no backfill),
 * and so do rows an instance of an older version inserts during a rolling upgrade, until a newer writer
 * updates them.
 */
const v2: HistoryMigration = (n) => [
  `ALTER TABLE ${n.history} ADD COLUMN flow_id text`,
  `CREATE INDEX ${n.byFlowIndex} ON ${n.history} (flow_id, create_time, topic, id) WHERE flow_id IS NOT NULL`,
];

/**
 * Version 3: `result`, a done task's result as kept (JSON text, or `!<bytes>` when it was not kept; see
 * runtime/result-text.ts). Nullable: nothing is rewritten; rows finished before the upgrade have none.
 */
const v3: HistoryMigration = (n) => [`ALTER TABLE ${n.history} ADD COLUMN result text`];

/**
 * Version 4: `logs`, a delay-queue task's log lines as Redis held them when its last attempt's end was copied
 * (raw: `<dropped> ...\n<line>\n...`; see runtime/report-text.ts readLogs). Nullable: nothing is rewritten;
 * rows whose attempts ended before the upgrade, and ordered tasks' rows, have none.
 */
const v4: HistoryMigration = (n) => [`ALTER TABLE ${n.history} ADD COLUMN logs text`];

/**
 * The schema's history: entry `i` migrates version `i` to `i + 1`. Append a step for each change; never
 * edit a released one (deployed tables went through it).
 */
export const HISTORY_MIGRATIONS: readonly HistoryMigration[] = [v1, v2, v3, v4];

/**
 * Brings the tables to the newest version of `migrations`, in one transaction under an advisory lock on the
 * table's name, so instances starting together migrate once. Returns the version now in place.
 * @throws HistorySchemaError when the table's version is newer than `migrations` know
 */
export async function migrateHistorySchema(
  client: PoolClient,
  names: HistoryTableNames,
  migrations: readonly HistoryMigration[] = HISTORY_MIGRATIONS,
): Promise<number> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`nestjs-distributed-queue:${names.history}`]);
    if (names.schema) {
      // NOTE: looked up first, as CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when it exists.
      const found = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [names.schema]);
      if (!found.rowCount) await client.query(`CREATE SCHEMA "${names.schema}"`);
    }
    await client.query(`CREATE TABLE IF NOT EXISTS ${names.version} (version int NOT NULL)`);
    const { rows } = await client.query<{ version: number }>(`SELECT version FROM ${names.version}`);
    const current = rows.length ? Math.max(...rows.map((r) => r.version)) : 0;
    if (current > migrations.length) throw new HistorySchemaError(names.label, current, migrations.length);
    for (let v = current; v < migrations.length; v++) {
      for (const statement of migrations[v](names)) await client.query(statement);
    }
    if (current < migrations.length) {
      await client.query(`DELETE FROM ${names.version}`);
      await client.query(`INSERT INTO ${names.version} (version) VALUES ($1)`, [migrations.length]);
    }
    await client.query('COMMIT');
    return migrations.length;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
