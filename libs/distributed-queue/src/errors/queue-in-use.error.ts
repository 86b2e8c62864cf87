import { DistributedQueueError } from './distributed-queue.error';

/**
 * `obliterate` was refused: workers of the queue are live (consumers of a delay-queue type, or machines of
 * the route queue). Stop them first, or pass `{ force: true }`.
 */
export class QueueInUseError extends DistributedQueueError {
  constructor(
    /** The queue `obliterate` was called for. */
    readonly queue: string,
    /** How many of its workers (consumers or machines) are live. */
    readonly live: number,
    what: string,
  ) {
    super(`Cannot obliterate ${queue}: ${live} ${what} of it live. Stop them first, or pass { force: true }`);
  }
}
