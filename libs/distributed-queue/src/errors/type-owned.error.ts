import { DistributedQueueError } from './distributed-queue.error';

/** Service mode: an application registers a task type that another application owns. */
export class TypeOwnedError extends DistributedQueueError {
  constructor(
    /** The task type. */
    readonly type: string,
    /** The application that owns the type. */
    readonly owner: string,
    /** The application that tried to register it. */
    readonly app: string,
  ) {
    super(`Task type "${type}" belongs to application "${owner}"; "${app}" cannot register it`);
  }
}
