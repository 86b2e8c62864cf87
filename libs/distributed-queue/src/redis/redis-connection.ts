import { Cluster, Redis } from 'ioredis';
import type { ClusterConnection, RedisConnection } from '../interfaces';
import { defineScripts, type RedisClient } from './script-loader';

function isCluster(connection: RedisConnection): connection is ClusterConnection {
  return typeof connection === 'object' && 'cluster' in connection;
}

/**
 * Opens a client. `commands` clients pipeline automatically and carry the Lua scripts; `subscriber`
 * clients only subscribe (ioredis resubscribes by itself after a reconnect).
 */
export function createRedisClient(connection: RedisConnection, role: 'commands' | 'subscriber', name: string): RedisClient {
  // NOTE: lazy, so that an application whose start-up fails before the first command leaves no socket open.
  const common = { connectionName: name, enableAutoPipelining: role === 'commands', lazyConnect: true };
  let client: RedisClient;
  if (isCluster(connection)) {
    const { redisOptions, ...clusterOptions } = connection.clusterOptions ?? {};
    client = new Cluster(connection.cluster, {
      ...clusterOptions,
      enableAutoPipelining: common.enableAutoPipelining,
      lazyConnect: true,
      redisOptions: { ...redisOptions, connectionName: name },
    });
  } else if (typeof connection === 'string') {
    client = new Redis(connection, common);
  } else {
    client = new Redis({ ...connection, ...common });
  }
  if (role === 'commands') defineScripts(client);
  return client;
}

/** Closes a client, waiting for replies in flight; falls back to disconnect when the server is gone. */
export async function closeRedisClient(client: RedisClient): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'wait') {
    client.disconnect();
    return;
  }
  try {
    await Promise.race([client.quit(), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  } catch {
    // the connection is gone already
  }
  client.disconnect();
}
