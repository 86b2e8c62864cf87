import type { Task, TaskHandler } from '../interfaces';

/** Anything a handler threw or rejected with, as an Error. */
export function toError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(String(thrown));
}

/**
 * Calls a handler and reports its outcome to `settle` (null = success, with what the handler returned): a
 * synchronous throw, a rejection, or success. Both engines run handlers through this; timeouts and aborts settle from outside.
 * NOTE: a handler that returns no promise is done at once: no promise round for it (the hot path of
 * synchronous work).
 */
export function callHandler(
  handler: TaskHandler,
  task: Task,
  signal: AbortSignal,
  settle: (error: Error | null, result?: unknown) => void,
): void {
  let outcome: unknown;
  try {
    outcome = handler.handle(task, signal);
  } catch (error) {
    settle(toError(error));
    return;
  }
  if (outcome && typeof (outcome as PromiseLike<unknown>).then === 'function') {
    (outcome as PromiseLike<unknown>).then((result) => settle(null, result), (error: unknown) => settle(toError(error)));
  } else {
    settle(null, outcome);
  }
}
