import type { LoggerService } from '@nestjs/common';
import { Cluster, type Redis } from 'ioredis';
import { RedisEvictionPolicyError, RedisUnavailableError } from '../errors';
import { isConnectionError } from './bounded-calls';
import type { RedisClient } from './script-loader';

/** The one `maxmemory-policy` that never drops a key. */
export const SAFE_EVICTION_POLICY = 'noeviction';

/** What a Redis server says of its memory (`INFO memory`). */
export interface ServerMemory {
  /** `host:port` of the server (a cluster's master). */
  node: string;
  /** `used_memory`, bytes. */
  usedBytes: number;
  /** `maxmemory`, bytes; 0: no limit. */
  maxBytes: number;
  /** `maxmemory_policy`. */
  policy: string;
  /** `mem_not_counted_for_evict`, bytes: replication and AOF buffers, left out of the limit's test. */
  notCountedBytes: number;
}

function field(info: string, name: string): string | undefined {
  return new RegExp(`^${name}:(.*?)\\r?$`, 'm').exec(info)?.[1];
}

function nodeName(server: Redis): string {
  return `${server.options.host ?? '127.0.0.1'}:${server.options.port ?? 6379}`;
}

/**
 * Reads `INFO memory` of the server, or of every master of a cluster. INFO is readable where CONFIG is not
 * (managed services rename or forbid CONFIG); it says the policy too.
 */
export async function readServerMemory(client: RedisClient, describe: string): Promise<ServerMemory[]> {
  const servers = client instanceof Cluster ? client.nodes('master') : [client as Redis];
  return Promise.all(servers.map(async (server) => {
    const info = await server.info('memory');
    return {
      node: client instanceof Cluster ? nodeName(server) : describe,
      usedBytes: Number(field(info, 'used_memory') ?? 0),
      maxBytes: Number(field(info, 'maxmemory') ?? 0),
      policy: field(info, 'maxmemory_policy') ?? 'unknown',
      notCountedBytes: Number(field(info, 'mem_not_counted_for_evict') ?? 0),
    };
  }));
}

/** The bytes Redis holds against `maxmemory` before a write: what it uses less its replication and AOF buffers. */
export const countedBytes = (s: Pick<ServerMemory, 'usedBytes'> & Partial<Pick<ServerMemory, 'notCountedBytes'>>): number =>
  s.usedBytes - (s.notCountedBytes ?? 0);

/**
 * True while a server (any master of a cluster) is over its `maxmemory`, as Redis tests it before a write;
 * undefined when its memory cannot be read (a user not allowed INFO); rejects when it cannot be reached.
 */
export async function overMemoryLimit(client: RedisClient, describe: string): Promise<boolean | undefined> {
  let servers: ServerMemory[];
  try {
    servers = await readServerMemory(client, describe);
  } catch (error) {
    if (error instanceof RedisUnavailableError || isConnectionError(error as Error)) throw error;
    return undefined;
  }
  return servers.some((s) => s.maxBytes > 0 && countedBytes(s) > s.maxBytes);
}

/**
 * Start-up check: refuses (`RedisEvictionPolicyError`) a server whose `maxmemory-policy` can evict keys,
 * unless `allowEviction` (then warns once). When the server refuses INFO (an ACL without it) the check says
 * it could not read the policy and goes on; a connection failure rejects (`RedisUnavailableError`: start-up
 * reports it, or, with `waitForRedis`, tries again).
 */
export async function checkEvictionPolicy(client: RedisClient, describe: string, allowEviction: boolean, logger: Pick<LoggerService, 'warn'>): Promise<void> {
  let servers: ServerMemory[];
  try {
    servers = await readServerMemory(client, describe);
  } catch (error) {
    if (error instanceof RedisUnavailableError || isConnectionError(error as Error)) throw error;
    logger.warn(`could not read Redis's maxmemory-policy at ${describe} (${(error as Error).message}): make sure it is "${SAFE_EVICTION_POLICY}", or queued tasks can be evicted`);
    return;
  }
  const evicting = servers.filter((s) => s.policy !== SAFE_EVICTION_POLICY);
  if (evicting.length === 0) return;
  if (!allowEviction) throw new RedisEvictionPolicyError(evicting[0].node, evicting[0].policy);
  logger.warn(`Redis at ${evicting.map((s) => `${s.node} (${s.policy})`).join(', ')} can evict keys: accepted by allowEviction; queued tasks are lost when it does`);
}
