import { DistributedQueueError } from './distributed-queue.error';

/**
 * Service mode: a delivery to an application instance failed (a failed attempt, retried with the type's
 * backoff on another instance where there is one). `status` is the HTTP status, 0 when no answer came
 * (connection refused or reset, or no answer within the time budget).
 */
export class DeliveryFailedError extends DistributedQueueError {
  constructor(
    readonly app: string,
    readonly instance: string,
    readonly status: number,
    detail: string,
  ) {
    super(`Delivery to "${app}" instance ${instance} failed${status ? ` with HTTP ${status}` : ''}: ${detail}`);
  }
}

/** Service mode: the owning application has no live instance to deliver to (the attempt is retried). */
export class NoLiveInstanceError extends DistributedQueueError {
  constructor(readonly app: string) {
    super(`Application "${app}" has no live instance`);
  }
}
