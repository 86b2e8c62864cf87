import type { TaskErrorInfo } from './inspection.interface';
import type { Task } from './task.interface';

/**
 * What happened to a task:
 * - `completed`: its handler succeeded;
 * - `failed`: an attempt failed (every failed attempt, then one of `retrying`, `dead` or `cancelled`);
 * - `retrying`: the failed attempt will be retried after its backoff;
 * - `dead`: the task was moved to dead letters;
 * - `cancelled`: the task was cancelled (waiting, or running: its handler was aborted);
 * - `recovered`: its worker died or stalled, and the task was taken back from the expired lease (or, for an
 *   ordered task, from the lost partition) to run again;
 * - `rateLimited` (delay queue, local only): its handler threw `RateLimitedError`: the task went back to its
 *   place without spending an attempt, and the fleet starts nothing of its type for `retryAfterMs`.
 * - `progress` (delay queue): its handler called `task.progress(value)`: locally every call, at once; from
 *   the stream the last value of each task per worker per 200 ms (what Redis kept).
 */
export type TaskEventName = 'completed' | 'failed' | 'retrying' | 'dead' | 'cancelled' | 'recovered' | 'rateLimited' | 'progress';

/** Every event name, for validation and for `'*'`. */
export const TASK_EVENT_NAMES: readonly TaskEventName[] = ['completed', 'failed', 'retrying', 'dead', 'cancelled', 'recovered', 'rateLimited', 'progress'];

/**
 * Events `'*'` leaves out: `progress` (as many as a handler reports, not a lifecycle step: listen to it by
 * name).
 */
export const NAMED_ONLY_EVENT_NAMES: readonly TaskEventName[] = ['progress'];

/** Events no stream carries: heard by `local` listeners only (`'*'` of a `fleet` listener leaves them out). */
export const LOCAL_ONLY_EVENT_NAMES: readonly TaskEventName[] = ['rateLimited'];

/**
 * Where an event comes from:
 * - `local`: a task this application instance ran, emitted once Redis has the state change (after the reply
 *   of the call that wrote it: a `completed` after its ack's; delivered in this process, at most once: lost
 *   if the process dies before the listener ran);
 * - `fleet`: the type's event stream in Redis, written in the same script as the state change by whichever
 *   instance made it; every following instance gets every event written after it started following, while
 *   the stream (capped at `events.streamMaxLen` entries) still holds it.
 */
export type TaskEventScope = 'local' | 'fleet';

/** One lifecycle event, as an `@OnTaskEvent` method receives it. */
export interface TaskEvent<P = unknown> {
  /** What happened. */
  event: TaskEventName;
  /** Where the event comes from: this instance (`local`) or the type's event stream (`fleet`). */
  scope: TaskEventScope;
  /**
   * The task. Local events carry the task as the handler saw it; fleet events carry id, type, attempt
   * (and key for ordered tasks) but no payload (`payload` is undefined), `dueAt` is 0 when unknown.
   */
  task: Task<P>;
  /**
   * `rateLimited`: the `RateLimitedError` the handler threw; its `retryAfterMs` is how long (ms, from Redis's
   * clock at the pause) the fleet starts nothing of the type.
   *
   * `failed`, `retrying`, `dead`: the error. Locally the `Error` the handler threw, as thrown (its own `stack`;
   * service mode: a `DeliveryFailedError` with the application's stack in `remoteStack`); from the stream its
   * name, message and `stack` (bounded, absent when there was none, see `TaskErrorInfo.stack`).
   */
  error?: Error | TaskErrorInfo;
  /**
   * `completed`: what the handler returned. Locally as returned; from the stream (a delay-queue type) as
   * kept: parsed from its JSON, absent when it returned nothing or the result was not kept (`maxResultBytes`).
   */
  result?: unknown;
  /** `progress`: the value the handler gave `task.progress`. */
  progress?: unknown;
  /** Local `completed`, `failed` and `rateLimited`: how long the handler ran, in ms. */
  durationMs?: number;
  /** Local `completed`, `failed` and `rateLimited`: when the handler started (epoch ms, this process's clock). */
  startedAt?: number;
  /** When it happened: epoch ms (local: this process's clock; fleet: the Redis clock). */
  at: number;
}

/** A listener of lifecycle events. Its errors are logged; a listener that hangs holds nothing up. */
export type TaskEventListener = (event: TaskEvent) => unknown;

/** Options of `@OnTaskEvent`. */
export interface OnTaskEventOptions {
  /**
   * `local`: tasks this instance ran; `fleet`: every instance's tasks of the type, from its Redis event
   * stream (the application follows the stream while it has such a listener).
   * @default 'local'
   */
  scope?: TaskEventScope;
}

/** Module option `events`: the per-type event streams in Redis. */
export interface EventsOptions {
  /**
   * Write lifecycle events to a capped per-type Redis stream in the scripts that change a task's state
   * (what fleet-scope listeners read). Set it the same on every instance: the instance that changes the
   * state is the one that writes.
   * @default true
   */
  stream?: boolean;
  /** Entries kept per stream (approximately: trimmed with `MAXLEN ~`); one entry holds a batch of tasks. @default 10000 */
  streamMaxLen?: number;
  /** How often a following instance reads the streams it follows, in ms. @default 200 */
  followIntervalMs?: number;
}

/** What `TaskInspectorService.getActivity` counts: events of a type in a recent window. */
export interface TaskActivity {
  /** The window, in ms, ending now (Redis clock). */
  windowMs: number;
  /** Events of each kind in the window (a `failed` per failed attempt). */
  counts: Partial<Record<TaskEventName, number>>;
}
