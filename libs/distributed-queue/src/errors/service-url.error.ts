import { DistributedQueueError } from './distributed-queue.error';

/**
 * Service mode with `service.url`: the application has no Redis connection, so what needs one directly
 * (listings and counts, pause, dead letters, fleet event listeners, the dashboard) is not available; submit,
 * cancel, reschedule and a task's state go through the scheduler.
 */
export class NoRedisConnectionError extends DistributedQueueError {
  constructor(
    /** What was called: the method or feature that needs Redis. */
    readonly operation: string,
  ) {
    super(`"${operation}" needs a Redis connection: with service.url this application reaches the queues only through the scheduler`);
  }
}

/** Service mode with `service.url`: a call to the scheduler failed (`status` 0: no answer). */
export class SchedulerRequestError extends DistributedQueueError {
  constructor(
    /** The HTTP status of the scheduler's answer; 0 when no answer came. */
    readonly status: number,
    /** The name of the error the scheduler answered with; `BadAnswer` for an answer that could not be read, the local error's name when no answer came. */
    readonly remoteName: string,
    detail: string,
  ) {
    super(`The scheduler ${status ? `answered ${status}` : 'did not answer'}: ${remoteName}: ${detail}`);
  }
}
