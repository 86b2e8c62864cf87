import { FlowProgress } from '../flow/flow-progress';
import { noRedis } from '../redis/no-redis';
import type { RedisClient } from '../redis/script-loader';
import type { MemoryEventSubscriber } from './memory-event-subscriber';

/**
 * Flows' progress in the testing module: the real `FlowProgress` on the in-memory flow store, settling what
 * finished in a microtask (no timer for Jest's fake timers to hold).
 */
export class MemoryFlowProgress extends FlowProgress {
  protected override schedule(flush: () => void): void {
    queueMicrotask(flush);
  }
}

/**
 * The testing module's stand-in for the commands connection: `publish` reaches the in-process channels (a
 * flow's end, for `followFlowEnds`); any other command is `NoRedisConnectionError`, as without Redis.
 */
export function memoryPublisher(subscriber: MemoryEventSubscriber): RedisClient {
  const none = noRedis();
  return new Proxy(none as object, {
    get(target, property, receiver) {
      if (property === 'publish') {
        return async (channel: string, message: string): Promise<number> => {
          subscriber.publish(channel, message);
          return 1;
        };
      }
      return Reflect.get(target, property, receiver) as unknown;
    },
  }) as RedisClient;
}
