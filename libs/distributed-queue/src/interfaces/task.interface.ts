import type { TaskFlow } from './flow.interface';
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
  /** When the task was due, in epoch milliseconds of the Redis clock (ordered tasks: when submitted). */
  readonly dueAt: number;
  /** The ordering key, for ordered tasks. */
  readonly key?: string;
  /**
   * Ordered tasks: the partition and its ownership epoch. The epoch grows every time the partition changes
   * owner; store it with your side effects to refuse writes from a stale owner (a fencing token).
   */
  readonly fence?: {
    /** The partition the task is in. */
    partition: number;
    /** The partition's ownership epoch when the task was taken. */
    epoch: number;
  };
  /**
   * The W3C `traceparent` of the span the task was submitted under (with the `tracing` option), so that its
   * runs join the submitter's trace; undefined otherwise.
   */
  readonly traceContext?: string;
  /** A flow node's flow: its id, its ref, and its dependencies' results (see `TaskFlowService.submitFlow`). */
  readonly flow?: TaskFlow;
}

/**
 * A task as its handler gets it: the task, and what the handler may say about it while it runs. Declare
 * `handle(task: ActiveTask<P>)` to use them (a handler declared with `Task<P>` still gets one).
 */
export interface ActiveTask<P = unknown> extends Task<P> {
  /**
   * Delay-queue tasks: this attempt's progress, any JSON value (a percentage, `{ done, total }`), at most
   * `maxProgressBytes`. The last value wins: it is shown by `getTask` and the dashboard while the attempt runs,
   * and a `progress` event carries it (local at once; fleet at most every 200 ms per worker, the last value).
   * Calls are coalesced: one call to Redis per worker per 200 ms at most, whatever the number of tasks; an
   * attempt that ends before its progress was written writes none (no call, no fleet event).
   * Ordered tasks and service mode: checked, not kept.
   * @throws InvalidArgumentError when `value` is not JSON or is larger than `maxProgressBytes`
   */
  progress(value: unknown): void;
  /**
   * Delay-queue tasks: one line of the task's log, kept with the task (every attempt's lines, each with its
   * attempt and time) and shown by `getTask`, the dashboard and the history, up to `taskLogs.maxLines` and
   * `taskLogs.maxBytes` per task (the oldest lines go first). A line longer than 4,096 characters is cut.
   * Written with the progress, at most every 200 ms, and before the attempt's end is recorded.
   * Ordered tasks and service mode: checked, not kept.
   * @throws InvalidArgumentError when `line` is not a string
   */
  log(line: string): void;
}

/** One line of a task's log (`TaskInfo.logs`). */
export interface TaskLogLine {
  /** The attempt that wrote it (1 for the first run). */
  attempt: number;
  /** When it was written: epoch ms of the worker's clock. */
  at: number;
  /** The line (at most 4,096 characters). */
  line: string;
}

/**
 * What a `@TaskWorker` class implements. Its `handle` gets an `ActiveTask`: declare `handle(task:
 * ActiveTask<P>)` to report progress and log lines.
 */
export interface TaskHandler<P = unknown> {
  /**
   * Runs one task. Resolve to acknowledge it; throw (or reject) to fail this attempt.
   * `signal` aborts on the task's timeout, on cancel, on a lost lease and on shutdown:
   * pass it to I/O and stop early when it fires.
   *
   * Declare `signal` only when you use it: for a method declared as `handle(task)` (no rest parameter, no
   * `arguments`), no AbortController is made per task, which saves about a tenth of a worker's CPU per task.
   * Its timeouts, cancels and lost leases still end the attempt as failed; the handler is just not told.
   */
  handle(task: Task<P>, signal: AbortSignal): Promise<unknown> | unknown;
}

/** Where a task is in its life. */
/** `pending`: a flow node waiting for its dependencies (see `TaskFlowService`). */
export type TaskState = 'pending' | 'delayed' | 'ready' | 'running' | 'done' | 'dead' | 'unknown';

/** Options of one submitted task. */
export interface SubmitOptions {
  /**
   * The task's id, unique per type. Submitting an id that already exists (delayed, ready, running or
   * dead) creates nothing and leaves the existing task as it is; finished tasks do not block the id.
   * Ids starting with `#` are reserved for generated ones, and `&` for flow nodes (`TaskFlowService`).
   * @default a generated id, `#<hex counter>` (short ids keep memory per task low)
   */
  id?: string;
  /** Run after this many milliseconds (Redis clock). Not with `runAt`. @default 0 */
  delay?: number;
  /** Run at this time (epoch ms or Date). Not with `delay`. A time in the past means now. */
  runAt?: number | Date;
  /**
   * Who goes first among due tasks: an integer from 0 (the most urgent) to 1000, as BullMQ users know it (a
   * lower number first). FIFO within a priority; a delayed task enters its priority when it falls due. With
   * the type's `agingMs`, a task that waited agingMs longer than another is served as if one level more urgent.
   * @default the type's `defaultPriority` (from its workers' options), else 0
   */
  priority?: number;
  /**
   * Delay-queue types: the task's group (a tenant id, say): 1 to 256 characters. Due tasks are served across
   * groups fairly (round-robin, weighted by `setGroupWeight`), so a group with a huge backlog gets its share
   * and no more; within a group, by due time, priority and submission. See `TaskGroupsService`.
   * @default none (while any group has due tasks, tasks without one share the group `''`)
   */
  group?: string;
  /**
   * Delay-queue types: a deadline (epoch ms or Date, Redis clock): no attempt of the task starts after it. A
   * task still waiting then never runs: when a worker would start it, it goes to dead letters with
   * `TaskExpiredError` (a `dead` event; counted dead; a waiter gets `TaskDeadError`). Must come after
   * `runAt`. Not with `ttlMs`. Re-driving the dead letter clears it.
   * @default none
   */
  expireAt?: number | Date;
  /** The same deadline given as ms from the submit (Redis clock); must exceed `delay`. Not with `expireAt`. @default none */
  ttlMs?: number;
  /**
   * Delay-queue types: submits with the same `key` stand for one task while it waits or runs, and for
   * `ttlMs` after its submit; what a submit does meanwhile is `mode`'s. See `DedupeOptions`. @default none
   */
  dedupe?: DedupeOptions;
}

/**
 * A submit's deduplication (per type). While a task of `key` stands (waiting or running), or within its
 * window (`ttlMs` from its submit or last extension), a submit adds no task and, by `mode`:
 * - `drop`: does nothing (the standing task goes on);
 * - `extend`: the window restarts (throttling that never lets a burst through);
 * - `replace`: a waiting standing task takes the new payload (a running one: nothing);
 * - `debounce`: a waiting standing task takes the new payload and the new submit's due time (its `delay`
 *   from now): it runs once the submits pause; after one has started, the next submit adds a new task.
 * The submit answers the standing task's id; `submitMany` says which happened (`SubmitResult.dedupe`).
 */
export interface DedupeOptions {
  /** 1 to 256 characters. */
  key: string;
  /** The window after the standing task's submit, ms; 0: only while it waits or runs. @default 0 */
  ttlMs?: number;
  /** @default 'drop' */
  mode?: 'drop' | 'extend' | 'replace' | 'debounce';
}

/**
 * A call's own durability (see the module option `durability`, which it needs): `false` to resolve once the
 * master applied the write, or replicas and/or timeoutMs other than the module's.
 */
export type CallDurability =
  | false
  | {
      /** Replicas that must acknowledge the write. @default the module's `durability.replicas` */
      replicas?: number;
      /** How long to wait for their acknowledgements, ms. @default the module's `durability.timeoutMs` */
      timeoutMs?: number;
    };

/** Options of a state-changing call as a whole (`submitMany`, `submitOrderedMany`, `cancel`). */
export interface CallOptions {
  /** This call's durability. @default the module option `durability` */
  durability?: CallDurability;
}

/** Options of `submit`: the task's, and the call's `durability`. */
export interface SubmitCallOptions extends SubmitOptions, CallOptions {}

/** The new due time of `reschedule` (`delay` or `runAt`), and the call's `durability`. */
export interface RescheduleOptions extends Pick<SubmitOptions, 'delay' | 'runAt'>, CallOptions {}

/** One item of `submitMany`. */
export interface SubmitItem<P = unknown> extends SubmitOptions {
  /** The task's payload. */
  payload: P;
}

/** The outcome of submitting one task. */
export interface SubmitResult {
  /** The task's id (given or generated); with `dedupe`, possibly the standing task's. */
  id: string;
  /** false when a task with this id already existed; nothing was changed then. */
  created: boolean;
  /** A submit with `dedupe` that added no task: what it did instead (`id` is the standing task's). */
  dedupe?: 'dropped' | 'extended' | 'replaced' | 'debounced';
}

/** What `cancel` did. */
export type CancelResult =
  /** The task was waiting and is gone. */
  | 'cancelled'
  /** The task is running: its handler's signal aborts and it will not be retried. */
  | 'cancel-requested'
  /** No waiting or running task has this id. */
  | 'not-found';

/** Options of one ordered task. */
export interface OrderedSubmitOptions {
  /** The task's id (not checked for uniqueness in the route queue). @default a random id */
  id?: string;
  /** Enter the partition after this many ms (through the delay queue). Not with `runAt`. */
  delay?: number;
  /** Enter the partition at this time. Not with `delay`. */
  runAt?: number | Date;
}

/** Options of `submitOrdered`: the task's, and the call's `durability`. */
export interface OrderedSubmitCallOptions extends OrderedSubmitOptions, CallOptions {}

/** One item of `submitOrderedMany`. */
export interface OrderedSubmitItem<P = unknown> extends OrderedSubmitOptions {
  /** The ordering key: tasks of one key run one at a time, in submit order. */
  key: string;
  /** The task's payload. */
  payload: P;
}

/** What happened to an ordered task at submit. */
export interface OrderedSubmitResult {
  /** The task's id (given or generated). */
  id: string;
  /**
   * Partition the key maps to. For a delayed task ('scheduled'), under the partition count this instance
   * knows: the partition it enters when due, unless the count grows meanwhile.
   */
  partition: number;
  /**
   * 'queued'; 'scheduled' (delayed: it enters the partition when due); 'discarded' (partition full,
   * Discard: the new task was dropped); 'dropped-oldest' (queued, and the oldest waiting task was dropped);
   * 'rejected' (partition full, Exception: only from `submitOrderedMany`, `submitOrdered` throws).
   */
  outcome: 'queued' | 'scheduled' | 'discarded' | 'dropped-oldest' | 'rejected';
  /** The id of the task dropped by DiscardOldest. */
  droppedId?: string;
}
