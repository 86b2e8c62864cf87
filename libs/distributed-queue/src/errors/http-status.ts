import { HttpException } from '@nestjs/common';
import {
  DistributedQueueError, InvalidArgumentError, InvalidPayloadError, InvalidSubmitOptionsError, InvalidTaskTypeError, RouteNotConfiguredError, RouteQueueLostError, UnknownTaskTypeError,
} from './distributed-queue.error';
import { DurabilityError } from './durability.error';
import { InvalidFlowError } from './flow.error';
import { QueueInUseError } from './queue-in-use.error';
import { RedisOutOfMemoryError } from './redis-memory.error';
import { NoRedisConnectionError } from './service-url.error';
import { RedisUnavailableError } from './redis-unavailable.error';
import { TypeOwnedError } from './type-owned.error';

const STATUS: [new (...args: never[]) => Error, number][] = [
  [UnknownTaskTypeError, 404],
  [RouteNotConfiguredError, 404],
  [QueueInUseError, 409],
  [TypeOwnedError, 409],
  [InvalidArgumentError, 400],
  [InvalidSubmitOptionsError, 400],
  [InvalidFlowError, 400],
  [InvalidTaskTypeError, 400],
  [InvalidPayloadError, 400],
  [NoRedisConnectionError, 501],
  [RedisUnavailableError, 503],
  [RouteQueueLostError, 503],
  [DurabilityError, 503],
  [RedisOutOfMemoryError, 507],
];

/**
 * The HTTP answer for an error an endpoint over the queues may meet: Nest's `HttpException`s keep their
 * status; the library's errors of bad input are 400, unknown types 404, a queue in use or a type another application owns 409, what needs Redis in an application without it 501, Redis unavailable or a write its replicas did not confirm (`DurabilityError`) 503, Redis out of memory 507. Undefined for
 * anything else (an unexpected error: answer 500 without details and log it).
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
