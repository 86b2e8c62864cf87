import type { TaskErrorInfo } from '../interfaces';
import { DistributedQueueError } from './distributed-queue.error';

/** `submitAndWait` / `waitFor`: the task ended in dead letters; `error` is its last error. */
export class TaskDeadError extends DistributedQueueError {
  constructor(readonly type: string, readonly id: string, readonly error: TaskErrorInfo) {
    super(`Task ${id} of type "${type}" is dead: ${error.name}: ${error.message}`);
  }
}

/** `submitAndWait` / `waitFor`: nothing ended the task within `timeoutMs`; the task itself goes on. */
export class WaitTimeoutError extends DistributedQueueError {
  constructor(readonly type: string, readonly id: string, readonly timeoutMs: number) {
    super(`Task ${id} of type "${type}" did not end within ${timeoutMs} ms (it goes on)`);
  }
}

/**
 * `waitFor`: no task has this id: never submitted, cancelled before it ran, or finished and no longer among
 * the type's last `keepDone` finished tasks.
 */
export class TaskNotFoundError extends DistributedQueueError {
  constructor(readonly type: string, readonly id: string) {
    super(`No task ${id} of type "${type}" (unknown, cancelled, or finished longer ago than keepDone remembers)`);
  }
}

/**
 * The task completed, but its result was not kept: larger than `maxResultBytes` (`bytes`), or not JSON
 * (`bytes` -1: a cycle, a BigInt).
 */
export class ResultNotKeptError extends DistributedQueueError {
  constructor(readonly type: string, readonly id: string, readonly bytes: number) {
    super(`Task ${id} of type "${type}" completed, but its result was not kept: ${bytes < 0 ? 'not JSON' : `${bytes} bytes, more than maxResultBytes`}`);
  }
}
