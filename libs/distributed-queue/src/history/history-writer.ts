import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomBytes } from 'crypto';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS } from '../distributed-queue.constants';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { EventStreams, type EventStreamRef } from '../events/event-streams';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import type { RedisClient } from '../redis/script-loader';
import { InvalidArgumentError } from '../errors';
import { decodeStreamEntry, type StreamEntry } from '../events/stream-entry';
import { HISTORY_STORE, type HistoryStore } from './history-store';

/** How long a writer's lease on a stream lasts; renewed at every pass. */
const LEASE_MS = 15_000;
/** A stream this full (of `events.streamMaxLen`) with events not yet copied is warned about. */
const BACKLOG_WARN = 0.8;
/** After a failed pass (PostgreSQL or Redis unreachable), wait this long. */
const RETRY_MS = 1000;
const HOUR_MS = 3_600_000;

interface Copied extends EventStreamRef {
  /** The last entry copied (known after the first pass). */
  position?: string;
  warned?: boolean;
}

interface LeaseScripts {
  dqHistoryLease(key: string, me: string, ms: number): Promise<number>;
}

/**
 * Copies the event streams into the history store: for each stream of every known type, whichever
 * instance holds the stream's lease reads from the position the store last recorded, applies a batch in
 * one transaction (idempotent upserts plus the new position), then trims the stream up to there. When
 * PostgreSQL is down or slow, task processing does not wait: the events stay in the stream (up to
 * `events.streamMaxLen` entries; a warning when it is 80 % full) and the writer catches up when it is back.
 * It also asks the scripts to log submits and starts (the recorded flags) and runs the retention job.
 */
@Injectable()
export class HistoryWriter implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('DistributedQueueHistory');
  private readonly me = randomBytes(8).toString('hex');
  private streams: Copied[] = [];
  private retentionTimer?: NodeJS.Timeout;
  private lowerFlags?: () => void;
  /** The pass running or the last one: passes run one after another (a flush waits for the running one). */
  private pass: Promise<boolean> = Promise.resolve(false);
  private stopped = false;
  private failing = false;

  constructor(
    private readonly explorer: DistributedQueueExplorer,
    private readonly events: EventStreams,
    @Inject(DISTRIBUTED_QUEUE_REDIS) private readonly redis: RedisClient,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Inject(HISTORY_STORE) private readonly store: HistoryStore | null,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.store || !this.options.history) return;
    const refs = new Map(this.explorer.knownTypes().flatMap((type) => this.events.of(type)).map((s) => [s.key, s]));
    this.streams = [...refs.values()];
    this.lowerFlags = await this.events.keepFlagsRaised(this.streams, true);
    this.retentionTimer = setInterval(() => void this.retention(), HOUR_MS);
    this.retentionTimer.unref();
    void this.retention();
    this.schedule(0);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.lowerFlags?.();
    clearInterval(this.retentionTimer);
    await this.pass;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.store?.close();
  }

  /** Entries of each stream not yet copied (about: copied entries are trimmed a node at a time). */
  async backlog(): Promise<{ stream: string; entries: number }[]> {
    return Promise.all(this.streams.map(async (s) => ({ stream: s.key, entries: await this.events.length(s.key) })));
  }

  /** Copies what is waiting now (tests and shutdown use it); resolves when every stream was read once. */
  async flush(): Promise<void> {
    await this.nextPass();
  }

  /** Runs a pass after the one in progress (two passes at once would copy the same entries twice). */
  private nextPass(): Promise<boolean> {
    this.pass = this.pass.then(() => this.copyAll());
    return this.pass;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      void this.nextPass().then((more) => this.schedule(more ? 0 : this.failing ? RETRY_MS : this.options.history!.flushIntervalMs));
    }, ms);
    timer.unref();
  }

  /** One pass over the streams; true when one of them may hold more. */
  private async copyAll(): Promise<boolean> {
    let more = false;
    try {
      for (const stream of this.streams) {
        if (this.stopped) break;
        if (await this.copy(stream)) more = true;
      }
      if (this.failing) this.logger.log('history: copying again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger.warn(`history: copying failed, events wait in Redis (${(error as Error).message})`);
      this.failing = true;
      for (const stream of this.streams) stream.position = undefined;
      await Promise.all(this.streams.map((s) => this.checkBacklog(s).catch(() => undefined)));
    }
    return more;
  }

  /** Copies one batch of one stream if this instance holds its lease; true when the batch was full. */
  private async copy(stream: Copied): Promise<boolean> {
    const scripts = this.redis as unknown as LeaseScripts;
    if ((await scripts.dqHistoryLease(`${stream.key}:writer`, this.me, LEASE_MS)) !== 1) {
      stream.position = undefined;
      return false;
    }
    const { batchSize } = this.options.history!;
    stream.position ??= (await this.store!.position(stream.key)) ?? '0-0';
    const entries = await this.events.read(stream.key, stream.position, batchSize);
    if (entries.length === 0) return false;
    const events = entries.flatMap((entry) => decodeStreamEntry(entry, stream));
    const last = entries[entries.length - 1][0];
    try {
      await this.store!.apply(stream.key, events, last);
    } catch (error) {
      // NOTE: a batch the store refuses as malformed would be refused forever: copy it entry by entry instead,
      // skipping (and logging) the entries that cannot be applied, so that one bad entry blocks nothing.
      if (!(error instanceof InvalidArgumentError)) throw error;
      await this.applyEachEntry(stream, entries);
    }
    stream.position = last;
    await this.events.trimBefore(stream.key, last);
    if (entries.length >= batchSize) await this.checkBacklog(stream);
    return entries.length >= batchSize;
  }

  private async applyEachEntry(stream: Copied, entries: StreamEntry[]): Promise<void> {
    for (const entry of entries) {
      try {
        await this.store!.apply(stream.key, decodeStreamEntry(entry, stream), entry[0]);
      } catch (error) {
        if (!(error instanceof InvalidArgumentError)) throw error;
        this.logger.error(`history: skipped stream entry ${entry[0]} of ${stream.key}, which cannot be applied: ${error.message}`);
        await this.store!.apply(stream.key, [], entry[0]);
      }
    }
  }

  private async checkBacklog(stream: Copied): Promise<void> {
    const length = await this.events.length(stream.key);
    const max = this.options.events.streamMaxLen;
    const near = length >= BACKLOG_WARN * max;
    if (near && !stream.warned) {
      this.logger.warn(`history: ${stream.key} holds ${length} of at most ${max} entries not yet copied; past that the oldest are dropped`);
    }
    stream.warned = near;
  }

  /** Deletes finished rows past the retention (every instance runs it hourly; deletes are idempotent). */
  private async retention(): Promise<void> {
    const history = this.options.history;
    if (!history || !this.store || this.stopped) return;
    try {
      const deleted = await this.store.purgeFinishedBefore(Date.now() - history.retentionDays * 86_400_000);
      if (deleted > 0) this.logger.log(`history: ${deleted} finished rows older than ${history.retentionDays} days deleted`);
    } catch (error) {
      this.logger.warn(`history: retention failed (${(error as Error).message})`);
    }
  }
}
