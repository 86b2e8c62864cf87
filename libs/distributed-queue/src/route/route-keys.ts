import { spreadSuffix } from './slot-spread';

/**
 * Keys of one partition: all carry the partition's own hash tag, `{<prefix>:<qId>:<p>:<s>}` with `s` chosen
 * so that partitions spread evenly over a cluster's masters (see slot-spread.ts), or `{<prefix>:<qId>:<p>}`
 * for a queue created before that (its meta has no `tags` field).
 */
export interface PartitionKeys {
  /** LIST of waiting items `<seq>:<at>:<json>` (at: Redis time when pushed), oldest first (the seed's q1, q2, ...). */
  list: string;
  /**
   * HASH: owner, epoch, state, next, lease, n, seq, barrier, touched, replays, tk (epoch that took the
   * batch in flight), handed (that batch was handed back: its replay is not counted), claim (last claim id),
   * paused (1 while the route queue is paused: no task starts).
   */
  own: string;
  /** HASH seq -> item: the batch its owner is running. */
  inflight: string;
  /** LIST of dead letters (JSON: item, diedAt, error). */
  dead: string;
  /** STREAM of the partition's lifecycle events (completed, dead), capped: what fleet-scope listeners read. */
  log: string;
  /** STRING with a TTL, kept by the instances that follow `log`: while it exists, completions are logged too. */
  followed: string;
  /** STRING with a TTL, kept by the history writer: while it exists, submits are logged too. */
  recorded: string;
  /**
   * HASH request id -> reply, one per bucket of request ids (`requestBucket`): the replies of push and
   * re-drive calls, kept a short while for a repeated call (a re-send).
   */
  requests(bucket: string): string;
}

/**
 * Keys of a route queue. Membership lives in the `{<prefix>:<qId>}` slot; each partition lives in its own
 * slot with its ownership record, so partitions spread over a cluster and the pop script can check the
 * owner atomically.
 */
export interface RouteKeys {
  /** ZSET machine id -> last heartbeat ms (the seed's d2). */
  machines: string;
  /** HASH partition -> machine id: the scheduler's plan (the seed's d3; d4's counts derive from it). */
  assign: string;
  /** HASH: partitions (count), barriers (JSON, after a resize). */
  meta: string;
  /** STRING: the scheduler lock (machine id, with a lease). */
  lock: string;
  /**
   * Pub/sub channel: `p:<n>` work arrived on an empty partition (or it was resumed), `o:<n>` ownership
   * changed, `h:<n>` the partition was paused, `r` rebalance now.
   */
  events: string;
  partition(p: number): PartitionKeys;
  /**
   * Names partition tags as the queue's meta says (its `tags` field): 'spread', or nothing for a queue an
   * earlier version created, whose tags stay plain. Until told, tags are spread (what a new queue gets).
   */
  useTags(stored: string | null | undefined): void;
  /** True once told how the queue names its tags (that never changes for a queue). */
  readonly tagsKnown: boolean;
}

/** Builds the keys of route queue `qId` under `prefix`. */
export function routeKeys(prefix: string, qId: string): RouteKeys {
  const base = `${prefix}:{${prefix}:${qId}}`;
  const cache = new Map<number, PartitionKeys>();
  let spread = true;
  let known = false;
  return {
    machines: `${base}:machines`,
    assign: `${base}:assign`,
    meta: `${base}:meta`,
    lock: `${base}:lock`,
    events: `${prefix}:route:${qId}`,
    partition(p: number): PartitionKeys {
      let keys = cache.get(p);
      if (!keys) {
        const tag = `${prefix}:${qId}:${p}`;
        const pb = `${prefix}:{${spread ? `${tag}:${spreadSuffix(tag, p)}` : tag}}`;
        keys = { list: `${pb}:q`, own: `${pb}:own`, inflight: `${pb}:inflight`, dead: `${pb}:dead`, log: `${pb}:log`, followed: `${pb}:followed`, recorded: `${pb}:recorded`, requests: (bucket) => `${pb}:rb:${bucket}` };
        cache.set(p, keys);
      }
      return keys;
    },
    useTags(stored: string | null | undefined): void {
      known = true;
      if (spread === (stored === 'spread')) return;
      spread = stored === 'spread';
      cache.clear();
    },
    get tagsKnown(): boolean {
      return known;
    },
  };
}

/** FNV-1a (32 bit) over the key's UTF-8 bytes: a stable spread of ordering keys over partitions. */
export function partitionOf(key: string, partitions: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(key, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % partitions;
}
