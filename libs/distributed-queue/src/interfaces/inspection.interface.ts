import type { TaskLogLine, TaskState } from './task.interface';

/** What the inspector shows: a task's state and record, dead letters, the route queue, counts and pages. */

/** A task as stored, for inspection. */
export interface TaskInfo<P = unknown> {
  /** The task's id. */
  id: string;
  /** The task type. */
  type: string;
  /** Where the task is in its life. */
  state: TaskState;
  /** Attempts started so far. */
  attempts?: number;
  /** When the task is or was due (epoch ms, Redis clock). */
  dueAt?: number;
  /** Delay-queue tasks: the priority, 1 to 1000 (see `SubmitOptions.priority`); absent for 0, the most urgent. */
  priority?: number;
  /** The payload (absent when it could not be read). */
  payload?: P;
  /** The last failure, for retried and dead tasks. */
  lastError?: TaskErrorInfo;
  /** Ordered tasks: the ordering key. */
  key?: string;
  /** Ordered tasks: the partition the task is in (for a delayed one, the partition it will enter). */
  partition?: number;
  /** Delay-queue tasks with a deadline (`expireAt` / `ttlMs` on submit): no attempt starts after it (ms, Redis clock). */
  expireAt?: number;
  /** Running delay-queue tasks (`getTask`): when the worker's lease expires unless renewed (ms, Redis clock). */
  leaseExpiresAt?: number;
  /** Running delay-queue tasks (`getTask`): who holds the lease, as `<host>/<pid>` of the worker's process. */
  leaseHolder?: string;
  /**
   * Finished delay-queue tasks (`getTask`, while among the type's last `keepDone`): what the handler returned
   * (absent when it returned nothing, or when its result was not kept: see `resultNotKept`).
   */
  result?: unknown;
  /** A result that was not kept: its size in bytes (more than `maxResultBytes`), or -1 (it was not JSON). */
  resultNotKept?: number;
  /** Running delay-queue tasks (`getTask`): the last value the running attempt gave `task.progress` (absent: none). */
  progress?: unknown;
  /**
   * Delay-queue tasks (`getTask`): the lines given to `task.log`, oldest first, every attempt's (absent:
   * none). They stay as long as the task does (a finished one while among the last `keepDone`).
   */
  logs?: TaskLogLine[];
  /** Lines of `logs` that were dropped to keep within `taskLogs` (the oldest). */
  logsDropped?: number;
}

/** A failure as recorded in Redis. */
export interface TaskErrorInfo {
  /** The error's name (its class name, e.g. `TaskTimeoutError`). */
  name: string;
  /** The error's message. */
  message: string;
  /** Attempts made when it failed. */
  attempts: number;
  /** When the failure was recorded (epoch ms). */
  failedAt: number;
  /** Service mode: the application instance the failed delivery went to (its next attempt goes elsewhere). */
  instance?: string;
  /**
   * The error's stack, bounded to `MAX_STACK_BYTES` (4 KiB: whole lines from the top, then a line saying how
   * many were cut). Service mode: the stack the application sent back. Absent when the thrown value was not an
   * Error, when the failure is the queue's own (a lease expired, a corrupt record), and in failures recorded by
   * versions before stacks were kept.
   */
  stack?: string;
}

/** A dead-lettered task. */
export interface DeadTask<P = unknown> {
  /** The task's id. */
  id: string;
  /** The task type. */
  type: string;
  /** When it was moved to dead letters (epoch ms, Redis clock). */
  diedAt: number;
  /** undefined when the record itself was corrupt. */
  payload?: P;
  /** The raw record when it could not be decoded. */
  raw?: string;
  /** Why it died: its last failure. */
  error: TaskErrorInfo;
}

/** A route queue dead letter. */
export interface OrderedDeadTask {
  /** The partition whose dead letters hold it. */
  partition: number;
  /** The task's id. */
  id: string;
  /** The task type. */
  type: string;
  /** The task's ordering key. */
  key: string;
  /** The task's payload. */
  payload: unknown;
  /** When it was moved to dead letters (epoch ms). */
  diedAt: number;
  /** Why it died; `stack` when the failed attempt's error had one (bounded, see `TaskErrorInfo.stack`). */
  error: {
    /** The error's name (its class name). */
    name: string;
    /** The error's message. */
    message: string;
    /** Attempts made. */
    attempts?: number;
    /** The error's stack, bounded to `MAX_STACK_BYTES`. */
    stack?: string;
  };
}

/** Who owns what in the route queue. */
export interface RouteStatus {
  /** The route queue's id (the `route.qId` option). */
  qId: string;
  /** Every partition of the route queue. */
  partitions: {
    /** The partition's number, from 0. */
    partition: number;
    /** The machine that owns it, or null when none does. */
    owner: string | null;
    /** Its ownership epoch: grows every time it changes owner (see `Task.fence`). */
    epoch: number;
    /** `'active'`, or `'revoking'` while its owner is asked to hand it over to another machine. */
    state: string;
    /** Tasks waiting in it. */
    waiting: number;
    /** Tasks its owner has taken and not acknowledged yet. */
    inFlight: number;
    /** Its dead letters. */
    dead: number;
  }[];
  /** The machines registered in the route queue. */
  machines: {
    /** The machine's id. */
    id: string;
    /** When its last heartbeat reached Redis (epoch ms). */
    lastHeartbeat: number;
  }[];
  /** The machine holding the scheduler lock (the one that assigns partitions now), or null. */
  lockHolder: string | null;
}

/** How many tasks of a type are in each state (`getCounts`). */
export interface TaskCounts {
  /** Waiting, due later. */
  delayed: number;
  /** Waiting, due now or earlier. */
  ready: number;
  /** Reserved by a worker (delay queue) or in an owner's batch (route queue). */
  running: number;
  /** Dead letters. */
  dead: number;
  /** Finished ids still remembered (at most `keepDone`; 0 for ordered types, which keep none). */
  done: number;
  /**
   * Ordered types only: the counts of each partition of the route queue (shared by all its ordered types;
   * `delayed` counts the queue's delayed ordered tasks).
   */
  partitions?: {
    /** The partition's number, from 0. */
    partition: number;
    /** Tasks waiting in it. */
    ready: number;
    /** Tasks its owner has taken and not acknowledged yet. */
    running: number;
    /** Its dead letters. */
    dead: number;
  }[];
  /**
   * Delay-queue types whose tasks carry priorities: waiting tasks (delayed and ready) per priority, by level
   * (`'0'` the most urgent, the level of tasks submitted without one); absent when no waiting task has a
   * priority other than 0.
   */
  priorities?: Record<string, number>;
}

/** A page of `listTasks`. */
export interface ListOptions {
  /** Tasks to skip. @default 0 */
  offset?: number;
  /** Tasks in the page, 1 to 1000. @default 100 */
  limit?: number;
}

/** A page of `listTaskPage`. */
export interface PageOptions {
  /** Where the page starts: the `next` of the page before. @default the first page */
  cursor?: string;
  /** Tasks in the page, 1 to 1000. @default 100 */
  limit?: number;
}

/** What `listTaskPage` returns: the tasks and the cursor of the page after them (null after the last one). */
export interface TaskPage<P = unknown> {
  /** The page's tasks. */
  tasks: TaskInfo<P>[];
  /** The cursor of the next page (`PageOptions.cursor`); null after the last page. */
  next: string | null;
}
