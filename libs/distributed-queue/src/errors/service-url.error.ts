import { DistributedQueueError } from './distributed-queue.error';

/**
 * Service mode with `service.url`: the application has no Redis connection, so what needs one directly
 * (listings and counts, pause, dead letters, fleet event listeners, the dashboard) is not available; submit,
 * cancel, reschedule and a task's state go through the scheduler.
 */
export class NoRedisConnectionError extends DistributedQueueError {
  constructor(readonly operation: string) {
    super(`"${operation}" needs a Redis connection: with service.url this application reaches the queues only through the scheduler`);
  }
}

/** Service mode with `service.url`: a call to the scheduler failed (`status` 0: no answer). */
export class SchedulerRequestError extends DistributedQueueError {
  constructor(
    readonly status: number,
    readonly remoteName: string,
    detail: string,
  ) {
    super(`The scheduler ${status ? `answered ${status}` : 'did not answer'}: ${remoteName}: ${detail}`);
  }
}
