import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, ROUTE_STORE } from '../distributed-queue.constants';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { delayQueueKeys } from '../redis/queue-keys';
import type { RedisClient } from '../redis/script-loader';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import type { RouteStore } from '../route/route.store';
import { eventsOfEntry, type StreamEntry } from './event-entry';
import { TaskEventBus } from './task-event-bus';

/** Entries read per stream per call. */
const READ_COUNT = 500;
/** How often the followed flags are set again, and how long each lives. */
const FLAG_EVERY_MS = 10_000;
const FLAG_TTL_MS = 3 * FLAG_EVERY_MS;

interface FollowedStream {
  key: string;
  /** The stream's followed flag: while it exists, the scripts log completions too. */
  flag: string;
  /** The delay type the stream belongs to; undefined for a route partition (entries name their types). */
  type?: string;
  /** The last entry id delivered. */
  last: string;
}

/**
 * Reads the event streams of the types that have fleet-scope listeners and hands their events to the bus.
 * It starts at the end of each stream (events from before the application started are not delivered),
 * reads every `events.followIntervalMs` (at once again after a full read), and goes on after an outage
 * from where it was, as long as the capped stream still holds those entries.
 */
@Injectable()
export class EventStreamFollower implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('DistributedQueue');
  private streams: FollowedStream[] = [];
  private timer?: NodeJS.Timeout;
  private flagTimer?: NodeJS.Timeout;
  private reading?: Promise<void>;
  private stopped = false;
  private failing = false;

  constructor(
    private readonly bus: TaskEventBus,
    private readonly explorer: DistributedQueueExplorer,
    @Inject(DISTRIBUTED_QUEUE_REDIS) private readonly redis: RedisClient,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Optional() @Inject(ROUTE_STORE) private readonly routeStore: RouteStore | null,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const keys = this.streamKeys();
    if (keys.length === 0) return;
    // NOTE: the flag first: completions logged from now on are after the position read next.
    await this.raiseFlags(keys);
    this.flagTimer = setInterval(() => void this.raiseFlags(this.streams).catch(() => undefined), FLAG_EVERY_MS);
    this.streams = await Promise.all(keys.map(async (s) => ({ ...s, last: await this.lastId(s.key) })));
    this.schedule(this.options.events.followIntervalMs);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.flagTimer);
    await this.reading;
  }

  /** The streams to follow: one per delay type with fleet listeners, each partition's for ordered ones. */
  private streamKeys(): Omit<FollowedStream, 'last'>[] {
    const wanted = this.bus.fleetTypes();
    if (wanted.length === 0) return [];
    const types = wanted.includes('*') ? this.explorer.knownTypes() : wanted;
    const out: Omit<FollowedStream, 'last'>[] = [];
    let ordered = false;
    for (const type of types) {
      if (this.explorer.isOrdered(type)) ordered = true;
      else {
        const keys = delayQueueKeys(this.options.keyPrefix, type);
        out.push({ key: keys.log, flag: keys.followed, type });
      }
    }
    const store = this.routeStore;
    if (ordered && store) {
      for (let p = 0; p < store.options.partitions; p++) {
        const keys = store.keys.partition(p);
        out.push({ key: keys.log, flag: keys.followed });
      }
    }
    return out;
  }

  /** Tells the scripts that the streams are followed (so that they log completions too). */
  private async raiseFlags(streams: Pick<FollowedStream, 'flag'>[]): Promise<void> {
    await Promise.all(streams.map((s) => this.redis.set(s.flag, '1', 'PX', FLAG_TTL_MS)));
  }

  private async lastId(key: string): Promise<string> {
    const [last] = (await this.redis.xrevrange(key, '+', '-', 'COUNT', 1)) as StreamEntry[];
    return last?.[0] ?? '0-0';
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.reading = this.readAll().then((more) => this.schedule(more ? 0 : this.options.events.followIntervalMs));
    }, ms);
  }

  /** Reads every stream once; true when one of them may hold more. */
  private async readAll(): Promise<boolean> {
    const results = await Promise.all(this.streams.map((s) => this.read(s)));
    return results.some((full) => full);
  }

  private async read(stream: FollowedStream): Promise<boolean> {
    let reply: [string, StreamEntry[]][] | null;
    try {
      reply = (await this.redis.xread('COUNT', READ_COUNT, 'STREAMS', stream.key, stream.last)) as [string, StreamEntry[]][] | null;
      if (this.failing) this.logger.log('event streams readable again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger.warn(`reading event streams failed (retrying): ${(error as Error).message}`);
      this.failing = true;
      return false;
    }
    const entries = reply?.[0]?.[1] ?? [];
    for (const entry of entries) {
      for (const event of eventsOfEntry(entry, stream.type)) this.bus.emit(event);
      stream.last = entry[0];
    }
    return entries.length >= READ_COUNT;
  }
}
