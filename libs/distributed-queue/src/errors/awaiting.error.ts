import type { TaskErrorInfo } from '../interfaces';
import { DistributedQueueError } from './distributed-queue.error';

/** `submitAndWait` / `waitFor`: the task ended in dead letters; `error` is its last error. */
export class TaskDeadError extends DistributedQueueError {
  constructor(
    /** The task's type. */
    readonly type: string,
    /** The task's id. */
    readonly id: string,
    /** The last error of the task, the one that sent it to dead letters. */
    readonly error: TaskErrorInfo,
  ) {
    super(`Task ${id} of type "${type}" is dead: ${error.name}: ${error.message}`);
  }
}

/** `submitAndWait` / `waitFor`: nothing ended the task within `timeoutMs`; the task itself goes on. */
export class WaitTimeoutError extends DistributedQueueError {
  constructor(
    /** The task's type. */
    readonly type: string,
    /** The task's id. */
    readonly id: string,
    /** How long the call waited, ms. */
    readonly timeoutMs: number,
  ) {
    super(`Task ${id} of type "${type}" did not end within ${timeoutMs} ms (it goes on)`);
  }
}

/**
 * `waitFor`: no task has this id: never submitted, cancelled before it ran, or finished and no longer among
 * the type's last `keepDone` finished tasks.
 */
export class TaskNotFoundError extends DistributedQueueError {
  constructor(
    /** The type the task was looked for in. */
    readonly type: string,
    /** The id that was not found. */
    readonly id: string,
  ) {
    super(`No task ${id} of type "${type}" (unknown, cancelled, or finished longer ago than keepDone remembers)`);
  }
}

/**
 * The task completed, but its result was not kept: larger than `maxResultBytes` (`bytes`), or not JSON
 * (`bytes` -1: a cycle, a BigInt).
 */
export class ResultNotKeptError extends DistributedQueueError {
  constructor(
    /** The task's type. */
    readonly type: string,
    /** The task's id. */
    readonly id: string,
    /** The result's size in bytes (more than `maxResultBytes`), or -1 when it was not JSON. */
    readonly bytes: number,
  ) {
    super(`Task ${id} of type "${type}" completed, but its result was not kept: ${bytes < 0 ? 'not JSON' : `${bytes} bytes, more than maxResultBytes`}`);
  }
}
