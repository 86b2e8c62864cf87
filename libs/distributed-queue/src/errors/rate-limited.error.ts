import { DistributedQueueError } from './distributed-queue.error';

/** The longest fleet-wide pause a handler may ask for: one day. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/**
 * Thrown by a delay-queue handler that met a rate limit of its own (an external 429): the task goes back to
 * its place at the head of the queue without spending an attempt, and no worker of the fleet starts a task
 * of its type for `retryAfterMs` (at most a day; a bad value counts as 0).
 */
export class RateLimitedError extends DistributedQueueError {
  /** How long the fleet starts no task of the type, ms: the value given, rounded up, 0 to a day (a bad value: 0). */
  readonly retryAfterMs: number;

  constructor(retryAfterMs: number, message?: string) {
    const ms = typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) ? Math.min(Math.max(0, Math.ceil(retryAfterMs)), MAX_RETRY_AFTER_MS) : 0;
    super(message ?? `rate limited: retry after ${ms} ms`);
    this.retryAfterMs = ms;
  }
}
