import { quote } from './quote';

/** Base class of every error this library throws. `name` is the subclass name. */
export class DistributedQueueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Module options are invalid. Thrown at start-up; the message names the option. */
export class InvalidOptionsError extends DistributedQueueError {
  constructor(
    /** The option at fault (a path such as `route.partitions`). */
    readonly option: string,
    problem: string,
  ) {
    super(`Invalid distributed-queue option "${option}": ${problem}`);
  }
}

/** A task type is empty, too long, or contains a character reserved for Redis hash tags. */
export class InvalidTaskTypeError extends DistributedQueueError {
  constructor(
    /** The value given as the task type. */
    readonly type: unknown,
    problem: string,
  ) {
    super(`Invalid task type ${quote(type)}: ${problem}`);
  }
}

/** A task type that has no worker in this application and is not declared in the `types` option. */
export class UnknownTaskTypeError extends DistributedQueueError {
  constructor(
    /** The unknown type. */
    readonly type: string,
  ) {
    super(
      `Unknown task type ${quote(type)}: no @TaskWorker handles it here and it is not declared in the "types" option ` +
        `(declare it there to submit from a producer-only application, or set strictTypes: false)`,
    );
  }
}

/** Submit options are invalid (negative delay, both delay and runAt, a bad id...). */
export class InvalidSubmitOptionsError extends DistributedQueueError {
  constructor(
    /** The submit option at fault. */
    readonly option: string,
    problem: string,
  ) {
    super(`Invalid submit option "${option}": ${problem}`);
  }
}

/** An argument of an inspection call is invalid (a state name, an offset or a limit); names it. */
export class InvalidArgumentError extends DistributedQueueError {
  constructor(
    /** The argument at fault. */
    readonly argument: string,
    problem: string,
  ) {
    super(`Invalid argument "${argument}": ${problem}`);
  }
}

/** The payload cannot be serialised to JSON or is larger than `maxPayloadBytes`. */
export class InvalidPayloadError extends DistributedQueueError {
  constructor(problem: string) {
    super(`Invalid task payload: ${problem}`);
  }
}

/** The serialised payload is larger than `maxPayloadBytes`. */
export class PayloadTooLargeError extends InvalidPayloadError {
  constructor(
    /** The serialised payload's size in bytes. */
    readonly bytes: number,
    /** `maxPayloadBytes`. */
    readonly limit: number,
  ) {
    super(`${bytes} bytes is larger than maxPayloadBytes (${limit})`);
  }
}

/** Two providers declare a worker for the same task type, or a worker class lacks `handle()`. */
export class InvalidTaskWorkerError extends DistributedQueueError {}

/** A handler ran longer than its `timeoutMs`; the task is retried or dead-lettered. */
export class TaskTimeoutError extends DistributedQueueError {
  constructor(
    /** The handler's `timeoutMs`. */
    readonly timeoutMs: number,
  ) {
    super(`Task timed out after ${timeoutMs} ms`);
  }
}

/** The task was cancelled while it was running. */
export class TaskCancelledError extends DistributedQueueError {
  constructor(
    /** The cancelled task's id. */
    readonly id: string,
  ) {
    super(`Task ${id} was cancelled`);
  }
}

/**
 * The worker lost its claim on a running task; another worker may run it. A delay-queue task's own lease
 * expired (`partition` undefined), or the lease of the route queue's partition the ordered task runs in
 * (`partition`: another machine owns the partition now, and runs what was in flight again).
 */
export class LeaseLostError extends DistributedQueueError {
  constructor(
    /** The id of the running task. */
    readonly id: string,
    /** The route queue's partition whose lease was lost; undefined for a delay-queue task. */
    readonly partition?: number,
  ) {
    super(
      partition === undefined
        ? `Reservation of task ${id} was lost (lease expired)`
        : `Lease of route queue partition ${partition} was lost while task ${id} ran (another machine owns the partition now)`,
    );
  }
}

/** The application is shutting down; the task is handed back without counting an attempt. */
export class ShutdownError extends DistributedQueueError {
  constructor() {
    super('Worker is shutting down');
  }
}

/** A task record in Redis could not be decoded; the task is moved to dead letters with this reason. */
export class CorruptTaskError extends DistributedQueueError {}

/** An ordered task or a route queue call, but the module has no `route` option. */
export class RouteNotConfiguredError extends DistributedQueueError {
  constructor(what: string) {
    super(`${what} needs the route queue: set the module option "route" ({ qId, partitions, ... })`);
  }
}

/**
 * An ordered task's partition is full and did not take it: `submitOrdered` under the reject strategy
 * Exception; or a delayed ordered task falling due, under Exception or Discard: its move into the partition
 * fails with this error (the mover's attempt, retried with the module's `defaults`, then a dead letter of the
 * type `__route__.<qId>`).
 */
export class PartitionFullError extends DistributedQueueError {
  constructor(
    /** The full partition. */
    readonly partition: number,
    /** The partition's limit of waiting tasks (`maxPartitionSize`). */
    readonly limit: number,
  ) {
    super(`Route queue partition ${partition} is full (${limit} waiting tasks)`);
  }
}

/** The configured partition count is smaller than the one Redis holds: shrinking is not supported. */
export class PartitionShrinkError extends DistributedQueueError {
  constructor(
    /** The route queue's id. */
    readonly qId: string,
    /** The partition count Redis holds. */
    readonly stored: number,
    /** The configured partition count (smaller). */
    readonly wanted: number,
  ) {
    super(
      `Route queue "${qId}" has ${stored} partitions; ${wanted} is fewer and shrinking is not supported ` +
        `(tasks would have to move between partitions). Keep ${stored} or more.`,
    );
  }
}

/**
 * The route queue's records are not in Redis and could not be re-created (Redis lost its data and the repair
 * found none either, e.g. it was flushed again meanwhile): submit again.
 */
export class RouteQueueLostError extends DistributedQueueError {
  constructor(
    /** The route queue's id. */
    readonly qId: string,
  ) {
    super(`Route queue "${qId}" has no records in Redis (lost, and not re-created yet): submit again`);
  }
}

/** A history call without the `history` option. */
export class HistoryNotConfiguredError extends DistributedQueueError {
  constructor() {
    super('The task history is not configured: set the "history" option of DistributedQueueModule (PostgreSQL)');
  }
}

/** A schedule's definition is refused: the message names the schedule and what is wrong. */
export class InvalidScheduleError extends DistributedQueueError {
  constructor(
    /** The schedule's name. */
    readonly schedule: string,
    problem: string,
  ) {
    super(`Invalid schedule ${quote(schedule)}: ${problem}`);
  }
}
