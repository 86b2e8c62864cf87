/** Module option `history`: the task history in PostgreSQL (needs the `pg` package, an optional peer). */
export interface HistoryOptions {
  /** A PostgreSQL connection string (`postgres://user@host:5432/db`) or node-postgres `PoolConfig` options. */
  connection: string | Record<string, unknown>;
  /** The history table. @default 'dq_task_history' */
  table?: string;
  /** The schema of the table. @default the connection's search path (usually 'public') */
  schema?: string;
  /** Finished tasks' rows are deleted after this many days (a job that runs hourly, in batches). @default 30 */
  retentionDays?: number;
  /** Stream entries copied per batch (one transaction). @default 500 */
  batchSize?: number;
  /** How often the writer looks for new events, in ms (rows lag the queue by about this much). @default 1000 */
  flushIntervalMs?: number;
}
