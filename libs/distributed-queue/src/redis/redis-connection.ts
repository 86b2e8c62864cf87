import { Logger, type LoggerService } from '@nestjs/common';
import { Cluster, Redis } from 'ioredis';
import type { ClusterConnection, RedisConnection } from '../interfaces';
import { defineScripts, type RedisClient } from './script-loader';

function isCluster(connection: RedisConnection): connection is ClusterConnection {
  return typeof connection === 'object' && 'cluster' in connection;
}

/** Where connection trouble is reported: a Nest `Logger` or any `LoggerService`. */
export type ConnectionLogger = Pick<LoggerService, 'log' | 'warn' | 'debug'>;

/**
 * Reports a connection's outages once each: the first error warns, errors while still down go to debug
 * (ioredis emits one per reconnect attempt), 'ready' after an outage logs once. A cluster client has a
 * scope per node besides its own, as a cluster stays ready while one of its nodes is down.
 */
class OutageLog {
  private readonly down = new Set<string>();

  constructor(private readonly logger: ConnectionLogger, private readonly name: string) {}

  error(scope: string, error: Error): void {
    const where = scope ? `${this.name} (${scope})` : this.name;
    if (this.down.has(scope)) {
      this.logger.debug?.(`Redis connection ${where} still down: ${error.message}`);
      return;
    }
    this.down.add(scope);
    this.logger.warn(`Redis connection ${where} failed: ${error.message}; reconnecting`);
  }

  ready(scope: string): void {
    if (this.down.delete(scope)) this.logger.log(`Redis connection ${scope ? `${this.name} (${scope})` : this.name} reconnected`);
  }
}

function logOutages(client: RedisClient, name: string, logger: ConnectionLogger): void {
  const outages = new OutageLog(logger, name);
  // NOTE: without an 'error' listener ioredis prints "[ioredis] Unhandled error event" on every retry.
  client.on('error', (error: Error) => outages.error('', error));
  client.on('ready', () => outages.ready(''));
  if (client instanceof Cluster) {
    client.on('node error', (error: Error, key: string) => outages.error(`node ${key}`, error));
    client.on('+node', (node: Redis) => {
      const key = `${node.options.host}:${node.options.port}`;
      node.on('ready', () => outages.ready(`node ${key}`));
    });
  }
}

/**
 * Opens a client. `commands` clients carry the Lua scripts (see `defineScripts`) and pipeline other
 * commands automatically; `subscriber` clients only subscribe (ioredis resubscribes by itself after a
 * reconnect); `reader` clients send long reads (event streams) apart from the commands connection.
 * Connection errors go to `logger`, once per outage.
 */
export function createRedisClient(
  connection: RedisConnection,
  role: 'commands' | 'subscriber' | 'reader',
  name: string,
  logger: ConnectionLogger = new Logger('DistributedQueue'),
): RedisClient {
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
  logOutages(client, name, logger);
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
