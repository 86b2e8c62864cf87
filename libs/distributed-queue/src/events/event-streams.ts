import { Inject, Injectable, OnApplicationShutdown, Optional } from '@nestjs/common';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, ROUTE_STORE } from '../distributed-queue.constants';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { delayQueueKeys } from '../redis/queue-keys';
import { closeRedisClient } from '../redis/redis-connection';
import { RedisConnections } from '../redis/redis-connections';
import type { RedisClient } from '../redis/script-loader';
import type { RouteStore } from '../route/route.store';
import { countEventsOfEntry, type EventCounts } from './event-entry';
import type { StreamEntry } from './stream-entry';

/** A stream of lifecycle events and its followed flag. */
export interface EventStreamRef {
  key: string;
  /** While this key exists, the scripts log completions too. */
  flag: string;
  /** The delay type the stream belongs to; undefined for a route partition (entries name their types). */
  type?: string;
  /** The route partition the stream belongs to. */
  partition?: number;
  /** While this key exists, the scripts log submits too, and attempts' start and worker (for the history). */
  recorded?: string;
}

/** A stream's size and ends (XINFO STREAM), read at once with a value kept beside it. */
export interface StreamState {
  length: number;
  /** Entries removed from the stream over its life (trimmed or dropped by the cap): entries added less the length. */
  removed: number;
  /** The ids of its first and last entries (undefined when it is empty). */
  first?: string;
  last?: string;
  /** The value of the key read with it (null when unset). */
  beside: string | null;
}

/** The fields of an XINFO STREAM reply (a flat name, value list) by name. */
function infoFields(reply: unknown): Map<string, unknown> {
  const list = Array.isArray(reply) ? reply : [];
  const fields = new Map<string, unknown>();
  for (let i = 0; i + 1 < list.length; i += 2) fields.set(String(list[i]), list[i + 1]);
  return fields;
}

/** The stream state in an XINFO STREAM reply (a missing stream: empty). */
function streamStateOf(reply: unknown, beside: string | null): StreamState {
  const fields = infoFields(reply);
  const length = Number(fields.get('length') ?? 0);
  const added = Number(fields.get('entries-added') ?? length);
  const idOf = (entry: unknown): string | undefined => (Array.isArray(entry) && entry.length > 0 ? String(entry[0]) : undefined);
  return { length, removed: Math.max(0, added - length), first: idOf(fields.get('first-entry')), last: idOf(fields.get('last-entry')), beside };
}

/** The replies of a MULTI, an error reply thrown (but XINFO's on a stream that does not exist, read as null). */
function execReplies(results: [Error | null, unknown][] | null): unknown[] {
  if (!results) throw new Error('stream read aborted');
  return results.map(([error, value]) => {
    if (error && !/no such key/i.test(error.message)) throw error;
    return error ? null : value;
  });
}

/** What a history writer asks the scripts to log beyond the fleet events (see raiseFlags). */
export type RecordLevel = 'outcomes' | 'starts';

/** How often followers set their flags again, and how long a flag lives. */
const FLAG_EVERY_MS = 10_000;
const FLAG_TTL_MS = 3 * FLAG_EVERY_MS;
/** Entries read back at most when counting recent events. */
const RECENT_LIMIT = 10_000;

/**
 * Reads the lifecycle event streams (the scripts write them): which streams a type has, their followed
 * flags, reads from a position and counts of recent events. The only code that sends stream commands.
 */
@Injectable()
export class EventStreams implements OnApplicationShutdown {
  /**
   * The connection stream reads go over, opened at the first read: a read of hundreds of entries (a long
   * reply for Redis to build and for this process to parse) never holds up the takes and acks queued
   * behind it on the commands connection. In alternating runs of the immediate benchmark with a fleet
   * listener, 8 % more tasks per second (median of 6).
   */
  private reader?: RedisClient;

  constructor(
    private readonly explorer: DistributedQueueExplorer,
    @Inject(DISTRIBUTED_QUEUE_REDIS) private readonly redis: RedisClient,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Optional() @Inject(ROUTE_STORE) private readonly routeStore: RouteStore | null,
    private readonly connections: RedisConnections,
  ) {}

  /** The streams of `types`, each once (the ordered types share their route queue's). */
  async ofTypes(types: readonly string[]): Promise<EventStreamRef[]> {
    // NOTE: partition keys depend on how the queue names its tags, which Redis holds: read it once first.
    const route = this.routeStore;
    if (route && !route.keys.tagsKnown && types.some((type) => this.explorer.isOrdered(type))) await route.partitionCount();
    return [...new Map(types.flatMap((type) => this.of(type)).map((s) => [s.key, s])).values()];
  }

  /** The streams of `type`: its own for a delay type, every partition's of its route queue for an ordered one. */
  private of(type: string): EventStreamRef[] {
    if (!this.explorer.isOrdered(type)) {
      const keys = delayQueueKeys(this.options.keyPrefix, type);
      return [{ key: keys.log, flag: keys.followed, type, recorded: keys.recorded }];
    }
    const store = this.routeStore;
    if (!store) return [];
    return Array.from({ length: store.options.partitions }, (_, p) => {
      const keys = store.keys.partition(p);
      return { key: keys.log, flag: keys.followed, partition: p, recorded: keys.recorded };
    });
  }

  /**
   * Tells the scripts that these streams are followed, for the next 30 s (so that they log completions too).
   * With `record` (the history writer) it raises the recorded flags instead, which ask for completions and
   * what the history needs: submits with their payload and the attempts' start and worker on their outcome
   * (`outcomes`), plus each attempt's start as it happens (`starts`). The followed flags are left to fleet
   * listeners, so that `isFollowed` tells the writer whether a real follower reads the stream.
   */
  async raiseFlags(streams: Pick<EventStreamRef, 'flag' | 'recorded'>[], record?: RecordLevel): Promise<void> {
    const flags = streams.map((s): [string, string] => (record && s.recorded ? [s.recorded, record === 'starts' ? 's' : 'o'] : [s.flag, '1']));
    await Promise.all(flags.map(([flag, value]) => this.redis.set(flag, value, 'PX', FLAG_TTL_MS)));
  }

  /**
   * Keeps the flags of `streams` raised while this instance follows them (`record`: the history's too):
   * raises them now, then every 10 s. Returns the function that stops.
   */
  async keepFlagsRaised(streams: Pick<EventStreamRef, 'flag' | 'recorded'>[], record?: RecordLevel): Promise<() => void> {
    await this.raiseFlags(streams, record);
    const raise = (): void => void this.raiseFlags(streams, record).catch(() => undefined);
    const timer = setInterval(raise, FLAG_EVERY_MS);
    timer.unref();
    // NOTE: a Redis restarted without persistence lost the flags: raise them again as soon as it is back.
    this.redis.on('ready', raise);
    return () => {
      clearInterval(timer);
      this.redis.off('ready', raise);
    };
  }

  /** True while some instance's fleet listeners follow the stream (its flag is up; a history writer does not raise it). */
  async isFollowed(flag: string): Promise<boolean> {
    return (await this.redis.exists(flag)) === 1;
  }

  /** How many entries the stream holds. */
  length(key: string): Promise<number> {
    return this.redis.xlen(key);
  }

  /** Drops the entries before `id` (approximately: whole nodes only, which is cheap). */
  async trimBefore(key: string, id: string): Promise<void> {
    await this.redis.xtrim(key, 'MINID', '~', id);
  }

  /**
   * Drops the entries up to `id`, `id` included, exactly (the stream then holds only the entries after it,
   * so that its length is what is left to read; each entry removed costs about as much as its XADD did).
   */
  async trimThrough(key: string, id: string): Promise<void> {
    const [ms, seq] = id.split('-');
    await this.redis.xtrim(key, 'MINID', `${ms}-${BigInt(seq ?? 0) + 1n}`);
  }

  /** The stream's length, entries removed so far and first and last ids, read at once with `besideKey`'s value. */
  async state(key: string, besideKey: string): Promise<StreamState> {
    // NOTE: in a MULTI with a command on a key of the stream's slot: XINFO names no key a cluster client can route by.
    const [info, beside] = execReplies(await this.redis.multi().xinfo('STREAM', key).get(besideKey).exec());
    return streamStateOf(info, beside === null || beside === undefined ? null : String(beside));
  }

  /**
   * How many entries the stream holds up to `id` (`id` included; `after`: after it instead), at most `max`
   * (read over the reader connection), with the stream's state at that moment.
   */
  async countFrom(key: string, id: string, after: boolean, max: number): Promise<{ count: number; state: StreamState }> {
    const range = after ? ['(' + id, '+'] : ['-', id];
    const [entries, info] = execReplies(
      await this.readerClient().multi().xrange(key, range[0], range[1], 'COUNT', Math.max(1, max)).xinfo('STREAM', key).exec(),
    );
    return { count: Array.isArray(entries) ? entries.length : 0, state: streamStateOf(info, null) };
  }

  /** The id of the stream's newest entry ('0-0' when empty). */
  async lastId(key: string): Promise<string> {
    const [last] = (await this.redis.xrevrange(key, '+', '-', 'COUNT', 1)) as StreamEntry[];
    return last?.[0] ?? '0-0';
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.reader) await closeRedisClient(this.reader);
  }

  /** Up to `count` entries after `after` (over the reader connection). */
  async read(key: string, after: string, count: number): Promise<StreamEntry[]> {
    const reply = (await this.readerClient().xread('COUNT', count, 'STREAMS', key, after)) as [string, StreamEntry[]][] | null;
    return reply?.[0]?.[1] ?? [];
  }

  private readerClient(): RedisClient {
    // NOTE: with service.url the commands client is a stand-in that refuses every call: no connection to open.
    if (this.options.service?.url) return this.redis;
    return (this.reader ??= this.connections.open('reader', 'streams'));
  }

  /** Redis time (ms). */
  async now(): Promise<number> {
    const [seconds, micros] = await this.redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  /**
   * Events per task type in `streams` since `sinceMs` (Redis clock), from the newest 10,000 entries per stream
   * at most (read newest first: a burst of older events in the window does not hide the recent ones).
   * A route queue's streams hold all its ordered types: one read counts them all.
   */
  async recentCounts(streams: EventStreamRef[], sinceMs: number): Promise<EventCounts> {
    const counts: EventCounts = new Map();
    const entries = await Promise.all(
      streams.map((s) => this.readerClient().xrevrange(s.key, '+', `${Math.floor(sinceMs)}-0`, 'COUNT', RECENT_LIMIT) as Promise<StreamEntry[]>),
    );
    entries.forEach((list, i) => {
      for (const entry of list) countEventsOfEntry(entry, streams[i].type, counts);
    });
    return counts;
  }
}
