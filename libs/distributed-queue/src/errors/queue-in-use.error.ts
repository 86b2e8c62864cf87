import { DistributedQueueError } from './distributed-queue.error';

/**
 * `obliterate` was refused: workers of the queue are live (consumers of a delay-queue type, or machines of
 * the route queue). Stop them first, or pass `{ force: true }`.
 */
export class QueueInUseError extends DistributedQueueError {
  constructor(
    readonly queue: string,
    readonly live: number,
    what: string,
  ) {
    super(`Cannot obliterate ${queue}: ${live} ${what} of it live. Stop them first, or pass { force: true }`);
  }
}
