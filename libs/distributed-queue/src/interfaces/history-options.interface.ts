/** Module option `history`: the task history in PostgreSQL (needs the `pg` package, an optional peer). */
export interface HistoryOptions {
  /** A PostgreSQL connection string (`postgres://user@host:5432/db`) or node-postgres `PoolConfig` options. */
  connection: string | Record<string, unknown>;
  /**
   * The history table (`<table>_positions` and `<table>_schema` beside it): lower-case letters, digits and `_`,
   * not starting with a digit nor with `pg_`, at most 53 characters; checked at start-up (InvalidOptionsError).
   * @default 'dq_task_history'
   */
  table?: string;
  /**
   * The schema of the tables (created when missing): the same rule as `table` (nor `information_schema`), at
   * most 63 characters.
   * @default the connection's search path (usually 'public')
   */
  schema?: string;
  /** Finished tasks' rows are deleted after this many days (a job that runs hourly, in batches). @default 30 */
  retentionDays?: number;
  /** Stream entries copied per batch (one transaction). @default 500 */
  batchSize?: number;
  /** How often the writer looks for new events, in ms (rows lag the queue by about this much). @default 1000 */
  flushIntervalMs?: number;
  /**
   * A task that has not finished this long (ms) after its submit gets its waiting row; one that finishes
   * sooner is written once, finished (half the PostgreSQL work of a short task). Until then its events are
   * held in the writer's memory (at most 50,000 tasks per stream) and kept in Redis, so a writer that dies
   * loses nothing. `flush()` writes them at once. 0 writes every state as soon as it is read.
   * @default 5000
   */
  coalesceMs?: number;
  /**
   * Every history query (the writer's, the retention's, `getHistory`, `searchHistory`) fails after this many
   * ms without an answer (node-postgres's `query_timeout`): a PostgreSQL that stopped answering (no reset, no
   * reply) never holds a query longer. Connecting is bounded apart (5 s unless the connection sets
   * `connectionTimeoutMillis`).
   * @default 10000 (or the connection's own `query_timeout`)
   */
  queryTimeoutMs?: number;
  /**
   * Also record each attempt's start as it happens, so that rows show `running` (otherwise a row goes from
   * waiting to its outcome, which carries the attempt's start and worker). It logs one more stream entry per
   * fetch: in the bench it costs about a tenth of the throughput. Give every instance the same value.
   * @default false
   */
  recordStarts?: boolean;
}
