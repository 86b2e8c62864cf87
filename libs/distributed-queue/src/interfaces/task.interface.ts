/** A task as a handler receives it. */
export interface Task<P = unknown> {
  /** The task's id: given at submit or generated. */
  readonly id: string;
  /** The task type (the `@TaskWorker` name). */
  readonly type: string;
  /** The payload as submitted (JSON round trip: Dates arrive as strings). */
  readonly payload: P;
  /** 1 on the first run, 2 on the first retry, and so on. */
  readonly attempt: number;
  /** When the task was due, in epoch milliseconds of the Redis clock. */
  readonly dueAt: number;
}

/** What a `@TaskWorker` class implements. */
export interface TaskHandler<P = unknown> {
  /**
   * Runs one task. Resolve to acknowledge it; throw (or reject) to fail this attempt.
   * `signal` aborts on the task's timeout, on cancel, on a lost lease and on shutdown:
   * pass it to I/O and stop early when it fires.
   */
  handle(task: Task<P>, signal: AbortSignal): Promise<unknown> | unknown;
}

/** Where a task is in its life. */
export type TaskState = 'delayed' | 'ready' | 'running' | 'done' | 'dead' | 'unknown';

/** Options of one submitted task. */
export interface SubmitOptions {
  /**
   * The task's id, unique per type. Submitting an id that already exists (delayed, ready, running or
   * dead) creates nothing and leaves the existing task as it is; finished tasks do not block the id.
   * @default a random 16-character id
   */
  id?: string;
  /** Run after this many milliseconds (Redis clock). Not with `runAt`. @default 0 */
  delay?: number;
  /** Run at this time (epoch ms or Date). Not with `delay`. A time in the past means now. */
  runAt?: number | Date;
}

/** One item of `submitMany`. */
export interface SubmitItem<P = unknown> extends SubmitOptions {
  payload: P;
}

/** The outcome of submitting one task. */
export interface SubmitResult {
  id: string;
  /** false when a task with this id already existed; nothing was changed then. */
  created: boolean;
}

/** What `cancel` did. */
export type CancelResult =
  /** The task was waiting and is gone. */
  | 'cancelled'
  /** The task is running: its handler's signal aborts and it will not be retried. */
  | 'cancel-requested'
  /** No waiting or running task has this id. */
  | 'not-found';

/** A task as stored, for inspection. */
export interface TaskInfo<P = unknown> {
  id: string;
  type: string;
  state: TaskState;
  /** Attempts started so far. */
  attempts?: number;
  dueAt?: number;
  payload?: P;
  /** The last failure, for retried and dead tasks. */
  lastError?: TaskErrorInfo;
}

/** A failure as recorded in Redis. */
export interface TaskErrorInfo {
  name: string;
  message: string;
  attempts: number;
  failedAt: number;
}

/** A dead-lettered task. */
export interface DeadTask<P = unknown> {
  id: string;
  type: string;
  /** When it was moved to dead letters (epoch ms, Redis clock). */
  diedAt: number;
  /** undefined when the record itself was corrupt. */
  payload?: P;
  /** The raw record when it could not be decoded. */
  raw?: string;
  error: TaskErrorInfo;
}
