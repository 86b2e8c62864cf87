import { DistributedQueueError } from './distributed-queue.error';

/**
 * The task history table in PostgreSQL has a schema version newer than this library knows (a newer release
 * migrated it). Upgrade the library, or point the history at another table.
 */
export class HistorySchemaError extends DistributedQueueError {
  constructor(
    readonly table: string,
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `Task history table ${table} has schema version ${found}; this version of the library knows up to ` +
        `version ${known}. Upgrade nestjs-distributed-queue, or use another table.`,
    );
  }
}
