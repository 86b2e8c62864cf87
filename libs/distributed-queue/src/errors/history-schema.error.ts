import { DistributedQueueError } from './distributed-queue.error';

/**
 * The task history table in PostgreSQL has a schema version newer than this library knows (a newer release
 * migrated it). Upgrade the library, or point the history at another table.
 */
export class HistorySchemaError extends DistributedQueueError {
  constructor(
    /** The history table. */
    readonly table: string,
    /** The schema version the table has. */
    readonly found: number,
    /** The newest schema version this version of the library knows. */
    readonly known: number,
  ) {
    super(
      `Task history table ${table} has schema version ${found}; this version of the library knows up to ` +
        `version ${known}. Upgrade nestjs-distributed-queue, or use another table.`,
    );
  }
}

/**
 * `TaskHistoryService.flush()` could not get what waited in Redis into PostgreSQL within its time limit:
 * PostgreSQL does not answer, or the instance holding a stream's lease does not copy it. Nothing is lost:
 * the events stay in Redis until a writer copies them.
 */
export class HistoryFlushTimeoutError extends DistributedQueueError {
  constructor(
    /** The Redis streams of history events that were not all copied in time. */
    readonly streams: string[],
    /** The flush's time limit, ms. */
    readonly timeoutMs: number,
  ) {
    const named = streams.slice(0, 3).join(', ') + (streams.length > 3 ? `, and ${streams.length - 3} more` : '');
    super(`History flush: not everything waiting was copied into PostgreSQL within ${timeoutMs} ms (streams ${named})`);
  }
}
