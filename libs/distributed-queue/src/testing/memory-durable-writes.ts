import type { DelayQueueStore } from '../delay/delay-queue.store';
import type { DurableWrites, WriteMark } from '../redis/durable-writes';

/**
 * The durable writes of the testing module: with the module option `durability`, a durable call is written
 * as any other and confirmed at once (memory has no replica to wait for), so that calls passing
 * `durability` behave as they do against Redis with healthy replicas.
 */
export function memoryDurableWrites(store: DelayQueueStore): DurableWrites {
  const mark = (): WriteMark => ({}) as WriteMark;
  const writes = {
    routeStore: null,
    store,
    mark,
    idle: async (): Promise<void> => undefined,
    write: async <T>(_key: string, write: () => Promise<T>) => ({ value: await write(), mark: mark() }),
    delayWrite: <T>(_marks: WriteMark[], _type: string, call: (s: DelayQueueStore) => Promise<T>): Promise<T> => call(store),
    confirmed: async <R>(_marks: WriteMark[], _policy: unknown, result: R): Promise<R> => result,
  };
  return writes as unknown as DurableWrites;
}
