/** The bounds a delay-queue consumer (`TaskConsumer`) keeps to. */

/** How long to wait before talking to Redis again after an error. */
export const ERROR_BACKOFF_MS = 250;
/** take calls in flight at once: a second one hides the round trip of the first. */
export const MAX_FETCHES = 2;
/** Expired reservations recovered per `take` call (bounds the script's work). */
export const RECOVER_LIMIT = 100;
/** How long a stopping consumer waits for its hand-back and last acks. */
export const HAND_BACK_MS = 2000;

/**
 * What a consumer keeps of its tasks: finished ids (the last `keepDone`) and results (up to `maxResultBytes`
 * each); what running tasks report (progress up to `maxProgressBytes`, log lines within `taskLogs`).
 */
export interface DoneOptions {
  keepDone: number;
  maxResultBytes: number;
  maxProgressBytes: number;
  taskLogs: { maxLines: number; maxBytes: number };
}
