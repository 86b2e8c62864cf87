import { DistributedQueueError } from './distributed-queue.error';

/**
 * Service mode: a delivery to an application instance failed (a failed attempt, retried with the type's
 * backoff on another instance where there is one). `status` is the HTTP status, 0 when no answer came
 * (connection refused or reset, or no answer within the time budget).
 */
export class DeliveryFailedError extends DistributedQueueError {
  constructor(
    /** The application the delivery went to (the type's owner). */
    readonly app: string,
    /** The application instance the delivery went to. */
    readonly instance: string,
    /** The HTTP status of the answer; 0 when no answer came. */
    readonly status: number,
    detail: string,
    /**
     * The stack of the handler's error as the application sent it back (bounded there and here, see
     * `MAX_STACK_BYTES`); undefined when it sent none (a non-Error thrown, an older version, no answer).
     */
    readonly remoteStack?: string,
    /**
     * The name of the handler's error as the application sent it back (`'UnrecoverableError'` dead-letters
     * the task at once); undefined when it sent none (no answer, a refusal without a result line).
     */
    readonly remoteName?: string,
  ) {
    super(`Delivery to "${app}" instance ${instance} failed${status ? ` with HTTP ${status}` : ''}: ${detail}`);
  }
}

/**
 * Service mode, in the scheduler: a delivery that does not count as an attempt, because no instance ran the
 * task to an end of its own: the application has no live instance (`NoLiveInstanceError`); the instance
 * refused the connection, or answered 503 `Unavailable` before running anything (starting, or its Redis
 * unreachable), and gets no more deliveries until its next heartbeat; or it shut down before the task ended
 * (its handler aborted with `ShutdownError` after `shutdownTimeoutMs`: the task may have run in part, as a
 * shutdown in plugin mode). The scheduler hands the task back to its place in the queue, where it waits for
 * a live instance; no attempt is spent.
 */
export class DeliveryNotMadeError extends DistributedQueueError {
  constructor(
    /** The application the delivery was for (the type's owner). */
    readonly app: string,
    /** The instance the delivery went to (that refused it, was unavailable or shut down); null when there was none to try. */
    readonly instance: string | null,
    detail: string,
  ) {
    super(`Delivery to "${app}"${instance ? ` instance ${instance}` : ''} not made: ${detail}`);
  }
}

/** Service mode: the owning application has no live instance to deliver to (the task waits for one). */
export class NoLiveInstanceError extends DeliveryNotMadeError {
  constructor(app: string) {
    super(app, null, 'no live instance');
    this.message = `Application "${app}" has no live instance`;
  }
}
