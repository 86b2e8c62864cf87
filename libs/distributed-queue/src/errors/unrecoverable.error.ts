import { DeliveryFailedError } from './delivery-failed.error';
import { DistributedQueueError } from './distributed-queue.error';

const UNRECOVERABLE = 'UnrecoverableError';

/**
 * Thrown by a handler (delay-queue or ordered) for a failure no retry can fix: a card declined, a record
 * deleted, a payload the handler refuses. The attempt fails and the task goes to dead letters at once,
 * whatever attempts it has left, with this error as its last error: listeners hear `failed` then `dead`,
 * never `retrying`; a waiter (`submitAndWait`, `waitFor`) gets `TaskDeadError`; a flow node dies (its
 * policy applies). A dead letter can still be re-driven. An error of another class named
 * `'UnrecoverableError'` counts the same (BullMQ's, while a worker is being moved over; one from another copy
 * of this package).
 *
 * @example
 * if (response.status === 404) throw new UnrecoverableError(`order ${orderId} no longer exists`);
 */
export class UnrecoverableError extends DistributedQueueError {
  /** What caused it, when given (`new UnrecoverableError(message, { cause })`). */
  readonly cause?: unknown;

  constructor(message = 'unrecoverable failure: not retried', options?: { cause?: unknown }) {
    super(message);
    if (options !== undefined && 'cause' in options) this.cause = options.cause;
  }
}

/**
 * Whether a handler's error ends its task without a retry: an `UnrecoverableError`, an error of that name, or
 * (service mode, in the scheduler) a delivery whose application handler threw one.
 */
export function isUnrecoverable(error: unknown): boolean {
  if (error instanceof DeliveryFailedError) return error.remoteName === UNRECOVERABLE;
  return error instanceof UnrecoverableError || (error instanceof Error && error.name === UNRECOVERABLE);
}
