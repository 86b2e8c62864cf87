import { DistributedQueueError } from './distributed-queue.error';

/** Service mode: an application registers a task type that another application owns. */
export class TypeOwnedError extends DistributedQueueError {
  constructor(
    readonly type: string,
    readonly owner: string,
    readonly app: string,
  ) {
    super(`Task type "${type}" belongs to application "${owner}"; "${app}" cannot register it`);
  }
}
