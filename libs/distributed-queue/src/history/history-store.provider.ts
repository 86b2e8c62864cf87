import type { Provider } from '@nestjs/common';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS } from '../distributed-queue.constants';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { closeRedisClient } from '../redis/redis-connection';
import type { RedisClient } from '../redis/script-loader';
import { EventSubscriber } from '../runtime/event-subscriber';
import { HISTORY_STORE, type HistoryStore } from './history-store';
import { PgHistoryStore } from './pg-history.store';

/**
 * The history store, opened (connected and migrated) at start-up when the `history` option is set, else
 * null: without the option nothing is loaded. A wrong connection fails the start-up, naming the option.
 */
export const historyStoreProvider: Provider = {
  provide: HISTORY_STORE,
  useFactory: async (options: ResolvedModuleOptions, redis: RedisClient, subscriber: EventSubscriber): Promise<HistoryStore | null> => {
    const history = options.history;
    if (!history) return null;
    try {
      return await PgHistoryStore.open({
        connection: history.connection, table: history.table, schema: history.schema, queryTimeoutMs: history.queryTimeoutMs,
      });
    } catch (error) {
      // NOTE: Nest cannot close an application whose start failed: close our connections ourselves.
      await Promise.all([subscriber.onApplicationShutdown(), closeRedisClient(redis)]);
      throw error;
    }
  },
  inject: [DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, DISTRIBUTED_QUEUE_REDIS, EventSubscriber],
};
