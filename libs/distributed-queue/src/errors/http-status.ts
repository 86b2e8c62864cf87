import { HttpException } from '@nestjs/common';
import { TaskNotFoundError, WaitTimeoutError } from './awaiting.error';
import {
  DistributedQueueError, HistoryNotConfiguredError, InvalidArgumentError, InvalidOptionsError, InvalidPayloadError, InvalidScheduleError, InvalidSubmitOptionsError,
  InvalidTaskTypeError, PartitionFullError, RouteNotConfiguredError, RouteQueueLostError, ShutdownError, TaskCancelledError, UnknownTaskTypeError,
} from './distributed-queue.error';
import { DurabilityError } from './durability.error';
import { InvalidFlowError } from './flow.error';
import { HistoryFlushTimeoutError } from './history-schema.error';
import { QueueInUseError } from './queue-in-use.error';
import { RedisOutOfMemoryError } from './redis-memory.error';
import { NoRedisConnectionError, SchedulerRequestError } from './service-url.error';
import { RedisUnavailableError, SubmitIncompleteError } from './redis-unavailable.error';
import { TypeOwnedError } from './type-owned.error';

// NOTE: an exported error missing here must be listed, with its reason, in http-status.spec's NO_STATUS.
const STATUS: [new (...args: never[]) => Error, number][] = [
  [UnknownTaskTypeError, 404],
  [RouteNotConfiguredError, 404],
  [HistoryNotConfiguredError, 404],
  [TaskNotFoundError, 404],
  [QueueInUseError, 409],
  [TypeOwnedError, 409],
  [TaskCancelledError, 409],
  [InvalidArgumentError, 400],
  [InvalidSubmitOptionsError, 400],
  [InvalidOptionsError, 400],
  [InvalidScheduleError, 400],
  [InvalidFlowError, 400],
  [InvalidTaskTypeError, 400],
  [InvalidPayloadError, 400],
  [NoRedisConnectionError, 501],
  [SchedulerRequestError, 502],
  [RedisUnavailableError, 503],
  [RouteQueueLostError, 503],
  [DurabilityError, 503],
  [PartitionFullError, 503],
  [SubmitIncompleteError, 503],
  [ShutdownError, 503],
  [HistoryFlushTimeoutError, 503],
  [WaitTimeoutError, 504],
  [RedisOutOfMemoryError, 507],
];

/**
 * The HTTP answer for an error an endpoint over the queues may meet: Nest's `HttpException`s keep their
 * status; the library's errors (a subclass takes its parent's status):
 *  - 400, bad input: `InvalidArgumentError`, `InvalidSubmitOptionsError`, `InvalidOptionsError`,
 *    `InvalidScheduleError`, `InvalidFlowError`, `InvalidTaskTypeError`, `InvalidPayloadError`;
 *  - 404, what is not there: an unknown type (`UnknownTaskTypeError`), a task (`TaskNotFoundError`), the
 *    route queue or the history in an application without its option (`RouteNotConfiguredError`,
 *    `HistoryNotConfiguredError`, as the dashboard answers a task's history without it);
 *  - 409, a state the call conflicts with: a queue in use, a type another application owns, an awaited task
 *    that was cancelled (`TaskCancelledError`);
 *  - 501: what needs Redis in an application without it (`NoRedisConnectionError`);
 *  - 502: the scheduler refused or failed a call of this application, or did not answer
 *    (`SchedulerRequestError`, whatever its own status);
 *  - 503, retry later: Redis unavailable, a write its replicas did not confirm (`DurabilityError`), the route
 *    queue lost, a batch cut short (`SubmitIncompleteError`), the application shutting down (`ShutdownError`),
 *    the history store not copying in time (`HistoryFlushTimeoutError`), and a full partition
 *    (`PartitionFullError`): it fills from every producer, so it is the queue that is overloaded, not this
 *    client that sent too many requests (429), and it is a configured cap, not Redis's memory (507);
 *  - 504: nothing ended an awaited task in time (`WaitTimeoutError`): the call waited on work done elsewhere,
 *    which goes on (not 408, which says the client was too slow to send its request);
 *  - 507: Redis out of memory.
 *
 * Undefined for anything else (an unexpected error: answer 500 without details and log it), which includes
 * the library's errors no call meets (raised only at start-up, or the reasons of a failed attempt, a handler's
 * signal or a dead letter) and an awaited task's failure (`TaskDeadError`, `ResultNotKeptError`).
 */
export function httpErrorOf(error: unknown):
  | {
      /** The HTTP status to answer with. */
      status: number;
      /** The body to answer with. */
      body: {
        /** The error, as the client may see it. */
        error: {
          /** The error's `name` (its class name). */
          name: string;
          /** The error's message. */
          message: string;
        };
      };
    }
  | undefined {
  if (!(error instanceof Error)) return undefined;
  const status =
    error instanceof HttpException
      ? error.getStatus()
      : error instanceof DistributedQueueError
        ? STATUS.find(([kind]) => error instanceof kind)?.[1]
        : undefined;
  return status === undefined ? undefined : { status, body: { error: { name: error.name, message: error.message } } };
}
