import type { PoolConfig } from 'pg';
import { InvalidOptionsError } from '../errors';
import { quote } from '../errors/quote';

/** Options of `PgHistoryStore.open`. */
export interface PgHistoryOptions {
  /**
   * The PostgreSQL server: a connection string (`postgres://user@host:5432/db`) or a pg `PoolConfig`.
   * Unless the config sets them, the connect timeout is 5 s and a query is abandoned after `queryTimeoutMs`.
   */
  connection: string | PoolConfig;
  /**
   * A query without an answer fails after this many ms (pg's `query_timeout`, which this overrides).
   * @default the connection's `query_timeout`, else 10000
   */
  queryTimeoutMs?: number;
  /**
   * The history table; `<table>_positions` and `<table>_schema` are created beside it. See checkHistoryName:
   * lower-case letters, digits, `_`; not `pg_…`; at most 53 characters.
   * @default 'dq_task_history'
   */
  table?: string;
  /**
   * The PostgreSQL schema holding the tables (created when absent). See checkHistoryName: lower-case
   * letters, digits, `_`; not `pg_…` nor `information_schema`; at most 63 characters.
   * @default the connection's current schema (usually `public`)
   */
  schema?: string;
  /**
   * Connections in the pool.
   * @default 4
   */
  poolSize?: number;
}

/** The quoted, qualified names of the store's relations. */
export interface HistoryTableNames {
  /** The table as named in messages (`schema.table` or `table`). */
  label: string;
  schema?: string;
  /** Quoted and qualified: the history table, the positions table, the version table. */
  history: string;
  positions: string;
  version: string;
  /** Index names, quoted, unqualified (an index lives in its table's schema). */
  byStatusIndex: string;
  finishedIndex: string;
  /** The rows of a flow's nodes (schema version 2). */
  byFlowIndex: string;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;
/** 63 (PostgreSQL's limit) minus the longest suffix we add (`_positions`, `_by_status`). */
export const MAX_HISTORY_TABLE = 53;
/** PostgreSQL's limit on a name. */
export const MAX_HISTORY_SCHEMA = 63;

export const DEFAULT_HISTORY_TABLE = 'dq_task_history';
export const DEFAULT_POOL_SIZE = 4;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
export const DEFAULT_QUERY_TIMEOUT_MS = 10_000;

/**
 * The one rule for `history.table` and `history.schema` (the option check at start-up and the store both
 * apply it): lower-case letters, digits and `_`, not starting with a digit; not `pg_…` (PostgreSQL's
 * catalog: a schema `pg_…` cannot be created, and an unqualified table `pg_class` reads pg_catalog's) nor
 * `information_schema`; a table at most 53 characters (the longest name made from it, `<table>_positions`,
 * fits PostgreSQL's 63), a schema at most 63.
 * @throws InvalidOptionsError naming `history.table` or `history.schema`
 */
export function checkHistoryName(kind: 'table' | 'schema', value: unknown): string {
  const option = `history.${kind}`;
  if (typeof value !== 'string' || !IDENTIFIER.test(value)) {
    throw new InvalidOptionsError(option, `${quote(value)} is not a plain identifier (a-z, 0-9, _; not starting with a digit)`);
  }
  if (value.startsWith('pg_') || value === 'information_schema') {
    throw new InvalidOptionsError(option, `"${value}" is a name of PostgreSQL's catalog (pg_*, information_schema)`);
  }
  const max = kind === 'table' ? MAX_HISTORY_TABLE : MAX_HISTORY_SCHEMA;
  if (value.length > max) throw new InvalidOptionsError(option, `"${value}" is longer than ${max} characters`);
  return value;
}

/** Validates `table` and `schema` and builds the names of the relations. */
export function historyTableNames(table: unknown = DEFAULT_HISTORY_TABLE, schema?: unknown): HistoryTableNames {
  const t = checkHistoryName('table', table);
  const s = schema === undefined ? undefined : checkHistoryName('schema', schema);
  const qualify = (name: string): string => (s ? `"${s}"."${name}"` : `"${name}"`);
  return {
    label: s ? `${s}.${t}` : t,
    schema: s,
    history: qualify(t),
    positions: qualify(`${t}_positions`),
    version: qualify(`${t}_schema`),
    byStatusIndex: `"${t}_by_status"`,
    finishedIndex: `"${t}_finished"`,
    byFlowIndex: `"${t}_by_flow"`,
  };
}

/** The pg pool config: the connection with our defaults (timeouts, pool size, application name). */
export function historyPoolConfig(options: PgHistoryOptions): PoolConfig {
  const { connection, poolSize = DEFAULT_POOL_SIZE, queryTimeoutMs } = options;
  if (!Number.isInteger(poolSize) || poolSize < 1) {
    throw new InvalidOptionsError('history.poolSize', `${String(poolSize)} is not a positive integer`);
  }
  if (queryTimeoutMs !== undefined && (!Number.isInteger(queryTimeoutMs) || queryTimeoutMs < 1)) {
    throw new InvalidOptionsError('history.queryTimeoutMs', `${String(queryTimeoutMs)} is not a positive integer`);
  }
  let base: PoolConfig;
  if (typeof connection === 'string' && connection) base = { connectionString: connection };
  else if (connection && typeof connection === 'object') base = connection;
  else throw new InvalidOptionsError('history.connection', 'expected a connection string or a pg PoolConfig');
  return {
    connectionTimeoutMillis: DEFAULT_CONNECT_TIMEOUT_MS,
    query_timeout: DEFAULT_QUERY_TIMEOUT_MS,
    application_name: 'nestjs-distributed-queue history',
    max: DEFAULT_POOL_SIZE,
    ...base,
    ...(options.poolSize === undefined ? {} : { max: poolSize }),
    ...(queryTimeoutMs === undefined ? {} : { query_timeout: queryTimeoutMs }),
  };
}
