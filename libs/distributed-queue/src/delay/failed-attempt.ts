import type { LoggerService } from '@nestjs/common';
import { CorruptTaskError, isUnrecoverable, TaskCancelledError } from '../errors';
import type { ResolvedWorkerOptions } from '../options/resolve-options';
import { backoffDelay } from '../runtime/backoff';
import { failedAttemptLine, stackOf } from '../runtime/error-stack';
import { countedInOutage, reportFailure } from '../redis/outage-log';
import type { ConsumerEvents } from './consumer-events';
import type { DelayQueueStore } from './delay-queue.store';
import type { FailOutcome } from '../redis/script-outcome';
import type { RunningTask } from './running-task';

/**
 * Records a failed attempt of a delay-queue task: retried after its backoff, or dead-lettered when it was the
 * last attempt (or cannot succeed: a corrupt record, a cancel, an `UnrecoverableError`). Its events and log line follow Redis's
 * answer; a failure that cannot be recorded is logged (the task's lease expires, and it runs again). While
 * Redis is unavailable, both are counted in the connection's outage lines, not logged one by one: a failure
 * that cannot be recorded for it, and an attempt retried that failed by it (a dead-lettered one is logged).
 */
export async function recordFailedAttempt(
  type: string, store: DelayQueueStore, options: ResolvedWorkerOptions, events: ConsumerEvents, logger: LoggerService,
  task: RunningTask, error: Error,
): Promise<FailOutcome | undefined> {
  const { id, token, attempt } = task.reservation;
  const finishedAt = Date.now();
  if (task.controller && !task.controller.signal.aborted) task.controller.abort(error);
  const final = error instanceof CorruptTaskError || error instanceof TaskCancelledError || isUnrecoverable(error) || attempt >= options.maxAttempts;
  const retryDelay = final ? -1 : backoffDelay(options.backoff, attempt);
  try {
    const stack = stackOf(error);
    const outcome = await store.fail(type, id, token, retryDelay, error, stack);
    events.outcome(task, outcome, error, finishedAt);
    if (outcome !== 'dead' && countedInOutage(`[${type}] attempt`, error)) return outcome;
    logger[outcome === 'dead' ? 'error' : 'warn']?.(failedAttemptLine(`[${type}] task ${id} attempt ${attempt}`, error, `: ${outcome}`, stack));
    return outcome;
  } catch (failError) {
    events.outcome(task, undefined, error, finishedAt);
    reportFailure(logger, `[${type}] recording a failure`, failError,
      `[${type}] could not record failure of ${id} (its lease will expire): ${(failError as Error).message}`);
    return undefined;
  }
}
