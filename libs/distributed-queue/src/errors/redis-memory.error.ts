import { DistributedQueueError } from './distributed-queue.error';

/**
 * Start-up found a Redis server whose `maxmemory-policy` can evict keys (any policy but `noeviction`): under
 * memory pressure it would silently drop queued tasks, leases and the route queue's records. Set the policy
 * to `noeviction` (`CONFIG SET maxmemory-policy noeviction`, or the managed service's parameter group), give
 * the queues a Redis of their own, or accept the risk with the module option `allowEviction: true`.
 */
export class RedisEvictionPolicyError extends DistributedQueueError {
  constructor(
    /** The server (`host:port`) whose policy was read. */
    readonly node: string,
    /** Its `maxmemory-policy`, e.g. `allkeys-lru`. */
    readonly policy: string,
  ) {
    super(
      `Redis at ${node} has maxmemory-policy "${policy}": it can evict the queues' keys (tasks are then lost without a word). ` +
        'Set it to "noeviction", or set the module option allowEviction: true to accept the risk',
    );
  }
}

/**
 * Redis refused a call because it is at `maxmemory` (policy `noeviction`): nothing of the call was written.
 * Free memory (drain or purge queues, raise `maxmemory`) and repeat it.
 */
export class RedisOutOfMemoryError extends DistributedQueueError {
  constructor(
    /** The library's name of the connection, e.g. `dq:orders:commands`. */
    readonly connection: string,
    /** Where it connects (never its password). */
    readonly target: string,
    /** The server's own message. */
    readonly reply: string,
  ) {
    super(`Redis out of memory (${connection} → ${target}): the call was refused and nothing written (${reply.split('\n')[0].slice(0, 200)})`);
  }
}
