import type { SubmitCallOptions } from './task.interface';

/** Options of `TaskSubmitService.waitFor`. */
export interface WaitOptions {
  /** Gives up after this long (ms) with `WaitTimeoutError`; the task goes on. @default 30000 */
  timeoutMs?: number;
  /** Gives up when aborted, with the signal's reason; the task goes on. */
  signal?: AbortSignal;
}

/**
 * Options of `TaskSubmitService.submitAndWait`: the submit's (`id`, `delay`, `priority`, ... and
 * `durability`) and the wait's.
 */
export interface SubmitAndWaitOptions extends SubmitCallOptions, WaitOptions {}
