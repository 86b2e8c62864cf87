import type { ConsumerEvents } from '../delay/consumer-events';
import type { LimitsStore } from '../delay/limits.store';
import type { RunningTask } from '../delay/running-task';
import type { RateLimitedError } from '../errors';

/**
 * A delay-queue handler threw `RateLimitedError`: pauses its type for the whole fleet for `retryAfterMs`
 * (Redis clock) and, once that call has answered or failed (as a `failed` event follows its fail script's
 * answer or failure), emits the local `rateLimited` event, which the metrics count. Returns the pause, which
 * the task's hand-back waits for.
 */
export function pauseForRateLimit(
  type: string, limits: Pick<LimitsStore, 'pauseFor'>, events: Pick<ConsumerEvents, 'emit'>, task: RunningTask, error: RateLimitedError,
): Promise<void> {
  const finishedAt = Date.now();
  return limits.pauseFor(type, error.retryAfterMs).finally(() => events.emit(task, 'rateLimited', error, undefined, finishedAt));
}
