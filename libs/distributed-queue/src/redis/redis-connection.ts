import { Logger } from '@nestjs/common';
import { Cluster, Redis } from 'ioredis';
import type { ClusterConnection, RedisConnection } from '../interfaces';
import { boundCalls, DEFAULT_REDIS_TIMEOUT_MS, describeTarget, type CallBounds } from './bounded-calls';
import { MemoryLog } from './memory-log';
import { OutageLog, type ConnectionLogger } from './outage-log';
import { overMemoryLimit } from './server-memory';
import { defineScripts, type RedisClient } from './script-loader';
import { refuseFailedSelect } from './connection-checks';
import { followMovedThroughNatMap, splitPipelinesAcrossNodes } from './cluster-redirects';

export type { ConnectionLogger } from './outage-log';

/** Redirections a cluster call may follow: as many as fit in its time bound (`redisTimeoutMs`). */
const UNBOUNDED_REDIRECTIONS = 1_000_000;

/**
 * A failover left the connection on a server demoted to a replica (a managed service moved its endpoint to the
 * promoted one; a Sentinel master demoted): every write is refused with READONLY until the connection is made
 * again. ioredis reconnects (to where the name or the sentinels now point) and sends the refused call again
 * (a replica wrote nothing of it). Without it the library stayed on the replica for good: submits refused,
 * workers stalled, a warning per call. The application's own `reconnectOnError` replaces it.
 */
export const reconnectOnReadOnly = (error: Error): 2 | false => (error.message.startsWith('READONLY') ? 2 : false);

function isCluster(connection: RedisConnection): connection is ClusterConnection {
  return typeof connection === 'object' && 'cluster' in connection;
}

/** Sends connection trouble of `client` to its outage log (once per outage, see `OutageLog`). */
function logOutages(client: RedisClient, name: string, logger: ConnectionLogger, closing: () => boolean): OutageLog {
  const outages = new OutageLog(logger, name, () => client.ping(), closing);
  // NOTE: without an 'error' listener ioredis prints "[ioredis] Unhandled error event" on every retry.
  client.on('error', (error: Error) => outages.error('', error));
  client.on('ready', () => outages.ready(''));
  client.on('end', () => outages.end());
  if (client instanceof Cluster) {
    client.on('node error', (error: Error, key: string) => outages.error(`node ${key}`, error));
    client.on('+node', (node: Redis) => {
      const key = `${node.options.host}:${node.options.port}`;
      node.on('ready', () => outages.ready(`node ${key}`));
    });
  }
  return outages;
}

/**
 * Opens a client. `commands` clients carry the Lua scripts (see `defineScripts`) and pipeline other
 * commands automatically; `subscriber` clients only subscribe (ioredis resubscribes by itself after a
 * reconnect); `reader` clients send long reads (event streams) apart from the commands connection.
 * Every call settles within `bounds` (see `boundCalls`); connection trouble goes to `logger`, once per outage.
 */
export function createRedisClient(
  connection: RedisConnection,
  role: 'commands' | 'subscriber' | 'reader',
  name: string,
  logger: ConnectionLogger = new Logger('DistributedQueue'),
  bounds: CallBounds = { timeoutMs: DEFAULT_REDIS_TIMEOUT_MS, closing: false },
  target = describeTarget(connection),
): RedisClient {
  // NOTE: lazy, so that an application whose start-up fails before the first command leaves no socket open.
  const common = { connectionName: name, enableAutoPipelining: role === 'commands', lazyConnect: true };
  let client: RedisClient;
  if (isCluster(connection)) {
    const { redisOptions, ...clusterOptions } = connection.clusterOptions ?? {};
    client = new Cluster(connection.cluster, {
      // NOTE: through a failover (CLUSTERDOWN, closed connections) and a slot migration (TRYAGAIN, ASK, MOVED)
      // ioredis retries a command every 100 ms, to a random node (which answers MOVED), each retry counting
      // as a redirection: its default of 16 gave up after ~1 s, before a failover ends. The bound is the
      // call's time instead (redisTimeoutMs, see boundCalls): a call that has not succeeded by then rejects
      // with RedisUnavailableError and is never sent after.
      maxRedirections: UNBOUNDED_REDIRECTIONS,
      ...clusterOptions,
      enableAutoPipelining: common.enableAutoPipelining,
      lazyConnect: true,
      redisOptions: { ...redisOptions, connectionName: name },
    });
    followMovedThroughNatMap(client);
    splitPipelinesAcrossNodes(client);
  } else if (typeof connection === 'string') {
    client = new Redis(connection, { ...common, reconnectOnError: reconnectOnReadOnly });
  } else {
    client = new Redis({ reconnectOnError: reconnectOnReadOnly, ...connection, ...common });
  }
  const outages = logOutages(client, name, logger, () => bounds.closing);
  const memory = new MemoryLog(logger, name, target, () => overMemoryLimit(client, target), () => bounds.closing);
  client.on('end', () => memory.end());
  boundCalls(client, name, target, bounds, { outage: outages, memory });
  refuseFailedSelect(client);
  if (role === 'commands') defineScripts(client);
  return client;
}

/**
 * Closes a client, waiting for replies in flight (each call is bounded, see `boundCalls`); falls back to
 * disconnect when the server is gone or does not answer within a second.
 */
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
