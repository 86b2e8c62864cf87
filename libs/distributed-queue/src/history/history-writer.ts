import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomBytes } from 'crypto';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, routeDelayType } from '../distributed-queue.constants';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { EventStreams, type EventStreamRef } from '../events/event-streams';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import type { RedisClient } from '../redis/script-loader';
import { SHUTDOWN_CALL_MS, shutdownCall } from '../runtime/graceful-stop';
import { StartupSteps } from '../runtime/startup-steps';
import { withTimeout } from '../runtime/with-timeout';
import { HISTORY_STORE, type HistoryStore } from './history-store';
import { HistoryFlushTimeoutError } from '../errors';
import { HistoryHold, type EntryToWrite } from './history-hold';
import { isOrderedDelayStream } from './history-decode';
import { readBatchLogs, taskLogsKey } from './history-logs';
import { TypeTimeouts } from './history-ttr';
import { reportFailure } from '../redis/outage-log';

/** How long a writer's lease on a stream lasts; renewed at every pass. */
const LEASE_MS = 15_000;
/** A stream this full (of `events.streamMaxLen`) with events not yet copied is warned about. */
const BACKLOG_WARN = 0.8;
/** How long copied entries stay in a stream that fleet listeners follow (they read every `followIntervalMs`). */
export const FOLLOWERS_KEEP_MS = 30_000;
/** How often the streams' backlog is checked (on its own timer: a pass may wait for PostgreSQL). */
const BACKLOG_CHECK_MS = 1000;
/** After a failed pass (PostgreSQL or Redis unreachable), wait this long. */
const RETRY_MS = 1000;
const HOUR_MS = 3_600_000;

interface Copied extends EventStreamRef {
  state: HistoryHold;
  /** The position last recorded in PostgreSQL (known after the first pass). */
  recorded?: string;
  warned?: boolean;
  /**
   * The entries the stream held up to `position` (a copied position) when `removed` entries had been removed
   * from it: while the position stays, what is left of them is `count` less what was removed since (only
   * the oldest entries are ever removed), so the backlog is counted again without reading the stream.
   */
  kept?: { position: string; count: number; removed: number };
}

interface LeaseScripts {
  dqHistoryLease(key: string, flushKey: string, me: string, ms: number): Promise<number>;
  dqHistoryRelease(key: string, me: string): Promise<number>;
}

/** flush()'s time limit unless given. */
export const FLUSH_TIMEOUT_MS = 30_000;
/** How often a flush looks again whether its streams were copied. */
const FLUSH_POLL_MS = 50;

/** The key beside a stream holding the position last recorded in PostgreSQL (read by every instance's backlog). */
const positionKey = (stream: string): string => `${stream}:copied`;

/** The milliseconds part of a stream entry id. */
const idMs = (id: string): number => Number(id.split('-')[0]);

/** -1, 0 or 1 as stream entry id `a` comes before, is, or comes after `b`. */
function compareEntryIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt);
  const [bm, bs] = b.split('-').map(BigInt);
  return am !== bm ? (am < bm ? -1 : 1) : as === bs ? 0 : as < bs ? -1 : 1;
}

/** The types `entries` of `stream` name: the stream's own, and per task on a route partition's. */
function typesOf(stream: EventStreamRef, entries: readonly EntryToWrite[]): string[] {
  const types = new Set<string>();
  if (stream.type !== undefined) types.add(stream.type);
  for (const { held } of entries) for (const type of held.types ?? []) if (type != null) types.add(String(type));
  return [...types];
}

/**
 * Copies the event streams into the history store: for each stream of every known type, whichever
 * instance holds the stream's lease reads from the position the store last recorded, applies a batch in
 * one transaction (idempotent upserts plus the new position), then trims the stream up to there. Tasks that
 * have not finished within `coalesceMs` of their submit are held back meanwhile (see HistoryHold). When
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
  private backlogTimer?: NodeJS.Timeout;
  private checkingBacklog = false;
  private lowerFlags?: () => void;
  /** The pass running or the last one: passes run one after another (a flush waits for the running one). */
  private pass: Promise<boolean> = Promise.resolve(false);
  private stopped = false;
  private failing = false;
  private readonly timeouts: TypeTimeouts;

  constructor(
    private readonly explorer: DistributedQueueExplorer,
    private readonly events: EventStreams,
    @Inject(DISTRIBUTED_QUEUE_REDIS) private readonly redis: RedisClient,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Inject(HISTORY_STORE) private readonly store: HistoryStore | null,
    private readonly startup: StartupSteps,
  ) {
    this.timeouts = new TypeTimeouts(explorer, options);
  }

  onApplicationBootstrap(): Promise<void> {
    if (!this.store || !this.options.history) return Promise.resolve();
    const history = this.options.history;
    return this.startup.run('history writer', () => this.start(history.recordStarts));
  }

  private async start(recordStarts: boolean | undefined): Promise<void> {
    this.streams = (await this.events.ofTypes(this.historyTypes())).map((ref) => ({ ...ref, state: new HistoryHold(!isOrderedDelayStream(ref)) }));
    this.lowerFlags?.();
    this.lowerFlags = await this.events.keepFlagsRaised(this.streams, recordStarts ? 'starts' : 'outcomes');
    this.retentionTimer = setInterval(() => void this.retention(), HOUR_MS);
    this.retentionTimer.unref();
    void this.retention();
    this.backlogTimer = setInterval(() => void this.checkBacklogs(), BACKLOG_CHECK_MS);
    this.backlogTimer.unref();
    this.schedule(0);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.startup.halt();
    this.stopped = true;
    this.lowerFlags?.();
    clearInterval(this.retentionTimer);
    clearInterval(this.backlogTimer);
    // NOTE: what is held back is written now; if that fails, the next writer reads it again from Redis.
    if (this.streams.some((s) => s.state.holding > 0)) this.pass = this.pass.then(() => this.copyAll(true));
    // NOTE: bounded by the shutdown grace (at least SHUTDOWN_CALL_MS): a PostgreSQL that stopped answering
    // holds a query for history.queryTimeoutMs (10 s by default). What this copy did not write stays in the
    // streams; the next writer copies it once this one's lease expires (batches apply idempotently).
    const graceMs = Math.max(SHUTDOWN_CALL_MS, this.options.shutdownTimeoutMs);
    const copied = await shutdownCall(this.pass, 'history: last copy', graceMs).then(
      () => true,
      (error: Error) => {
        this.logger.warn(`${error.message}; the next writer copies what it did not write`);
        return false;
      },
    );
    // NOTE: the streams go to another instance's writer at its next pass, not once the leases expire (15 s).
    // Only after a last copy that ended: one still waiting on PostgreSQL keeps its leases until they expire.
    if (copied) await shutdownCall(this.releaseLeases(), 'history: handing the streams over').catch(() => undefined);
  }

  /** Gives up this writer's leases on its streams (those another writer holds are left alone). */
  private async releaseLeases(): Promise<void> {
    const scripts = this.redis as unknown as LeaseScripts;
    await Promise.all(this.streams.map((stream) => scripts.dqHistoryRelease(`${stream.key}:writer`, this.me)));
  }

  async onApplicationShutdown(): Promise<void> {
    // NOTE: ending the pool waits for its connections' queries: with PostgreSQL silent, not past SHUTDOWN_CALL_MS.
    await shutdownCall(this.store?.close(), 'closing the history store').catch((error: Error) => this.logger.warn(error.message));
  }

  /**
   * The types whose streams are copied: the known ones, and first the route queue's delay queue when an
   * ordered type is known (delayed ordered tasks' submits are logged there; copied first in a pass, so that
   * a row usually starts from its submit before its partition's events come).
   */
  private historyTypes(): string[] {
    const known = this.explorer.knownTypes();
    const route = this.options.route;
    return route && known.some((type) => this.explorer.isOrdered(type)) ? [routeDelayType(route.qId), ...known] : known;
  }

  /**
   * Entries of each stream not yet copied: after the position last recorded in PostgreSQL (the entries
   * before it that are kept for fleet listeners do not count); all of the stream's before a first copy.
   */
  async backlog(): Promise<{ stream: string; entries: number }[]> {
    return Promise.all(this.streams.map(async (s) => ({ stream: s.key, entries: await this.backlogOf(s) })));
  }

  /**
   * One stream's entries after the recorded position (published beside the stream by the writer that
   * recorded it, so that every instance counts the same). Cheap in the usual cases: nothing to count when
   * no entry up to the position is left (no fleet listener: the writer trims them all) or none after it;
   * else the side of the position with fewer entries (by their times) is counted once per position, and
   * the count is then kept up to date from the stream's removals alone.
   */
  private async backlogOf(stream: Copied): Promise<number> {
    const state = await this.events.state(stream.key, positionKey(stream.key));
    const position = state.beside;
    if (!position || !state.first || !state.last || compareEntryIds(state.first, position) > 0) return state.length;
    if (compareEntryIds(state.last, position) <= 0) return 0;
    const kept = stream.kept;
    if (kept?.position === position) {
      const left = kept.count - (state.removed - kept.removed);
      if (left > 0) return Math.max(0, state.length - left);
    }
    const span = idMs(state.last) - idMs(state.first);
    const after = span > 0 && (idMs(position) - idMs(state.first)) / span >= 0.5;
    const counted = await this.events.countFrom(stream.key, position, after, state.length + 1);
    const keptCount = after ? counted.state.length - counted.count : counted.count;
    stream.kept = { position, count: keptCount, removed: counted.state.removed };
    return Math.max(0, counted.state.length - keptCount);
  }

  /**
   * Copies what is waiting in the streams now, held-back tasks included, whichever instance holds each
   * stream's lease: this one copies the streams it holds; for the others it asks the holder (a flush request
   * beside the stream, seen at the holder's next pass) and waits for PostgreSQL's position of the stream to
   * reach the entry that was last when called (a holder that died is replaced once its lease expires).
   * Resolves once all of it is in PostgreSQL.
   * @throws HistoryFlushTimeoutError when that takes longer than `timeoutMs`
   */
  async flush(timeoutMs = FLUSH_TIMEOUT_MS): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    let targets: Map<Copied, string> | undefined;
    let lastError: unknown;
    for (;;) {
      const left = targets ? [...targets.keys()] : this.streams;
      if (performance.now() >= deadline) throw this.flushTimeout(left, timeoutMs, lastError);
      try {
        // NOTE: each step bounded by what is left of the time limit (a PostgreSQL that stopped answering
        // holds a query for queryTimeoutMs; the step goes on in the background, its outcome ignored).
        targets = await withTimeout(this.flushStep(targets), Math.max(1, deadline - performance.now()), 'history flush');
        if (targets.size === 0) return;
      } catch (error) {
        lastError = error;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(FLUSH_POLL_MS, deadline - performance.now()))));
    }
  }

  /**
   * One round of a flush: the streams' targets (their last entries, read on the first round), a pass that
   * copies the streams this instance holds (everything, held tasks included), then the streams whose
   * position in PostgreSQL is still before their target, whose holders are asked to copy at their next pass.
   */
  private async flushStep(known: Map<Copied, string> | undefined): Promise<Map<Copied, string>> {
    let targets = known;
    if (!targets) {
      const lasts = await Promise.all(this.streams.map((s) => this.events.lastId(s.key)));
      targets = new Map(this.streams.flatMap((s, i): [Copied, string][] => (lasts[i] === '0-0' ? [] : [[s, lasts[i]]])));
      if (targets.size === 0) return targets;
    }
    await this.nextPass(true);
    const left = new Map<Copied, string>();
    await Promise.all(
      [...targets].map(async ([s, target]) => {
        if (compareEntryIds((await this.store!.position(s.key)) ?? '0-0', target) < 0) left.set(s, target);
      }),
    );
    await Promise.all([...left.keys()].map((s) => this.redis.set(`${s.key}:flush`, '1', 'PX', LEASE_MS, 'NX')));
    return left;
  }

  private flushTimeout(left: Copied[], timeoutMs: number, cause: unknown): HistoryFlushTimeoutError {
    const error = new HistoryFlushTimeoutError(left.map((s) => s.key), timeoutMs);
    if (cause !== undefined) Object.assign(error, { cause });
    return error;
  }

  /** Runs a pass after the one in progress (two passes at once would copy the same entries twice). */
  private nextPass(force = false): Promise<boolean> {
    this.pass = this.pass.then(() => this.copyAll(force));
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
  private async copyAll(force: boolean): Promise<boolean> {
    let more = false;
    try {
      for (const stream of this.streams) {
        if (this.stopped && !force) break;
        if (await this.copy(stream, force)) more = true;
      }
      if (this.failing) this.logger.log('history: copying again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) reportFailure(this.logger, 'history: copying', error, `history: copying failed, events wait in Redis (${(error as Error).message})`);
      this.failing = true;
      for (const stream of this.streams) this.forget(stream);
    }
    return more;
  }

  /** Copies one batch of one stream if this instance holds its lease; true when the batch was full. */
  private async copy(stream: Copied, force: boolean): Promise<boolean> {
    const scripts = this.redis as unknown as LeaseScripts;
    const lease = await scripts.dqHistoryLease(`${stream.key}:writer`, `${stream.key}:flush`, this.me, LEASE_MS);
    if (lease === 0) {
      this.forget(stream);
      return false;
    }
    // NOTE: another instance's flush() waits for this stream: copy everything this pass, held tasks included.
    if (lease === 2) force = true;
    const { batchSize, coalesceMs } = this.options.history!;
    const { state } = stream;
    if (state.cursor === undefined) {
      stream.recorded = (await this.store!.position(stream.key)) ?? '0-0';
      state.cursor = stream.recorded;
      await this.publishPosition(stream, stream.recorded);
    }
    const entries = await this.events.read(stream.key, state.cursor, batchSize);
    if (entries.length === 0 && state.holding === 0) return false;
    const taken = state.take(entries, coalesceMs, force);
    if (taken.entries.length > 0 || taken.position !== stream.recorded) {
      // NOTE: a delay type's attempt ends take their tasks' log lines (a failed read fails the pass, which is
      // retried from PostgreSQL's position); a route partition's ordered tasks keep none.
      const logs = stream.type === undefined ? new Map<string, string>() : await readBatchLogs(this.redis, taskLogsKey(this.options.keyPrefix, stream.type), taken.entries.map((e) => e.held));
      const skipped = await this.store!.applyEntries({
        stream: stream.key, entries: taken.entries.map((e) => ({ entry: e.held.entry, only: e.only })), position: taken.position, from: stream, logs, types: typesOf(stream, taken.entries), timeoutOf: (type) => this.timeouts.of(type),
      });
      for (const { event, problem } of skipped) {
        this.logger.error(`history: skipped an event of stream entry ${event.entryId} of ${stream.key}, which cannot be applied: it ${problem}`);
      }
      stream.recorded = taken.position;
      await this.trim(stream, taken.position);
      await this.publishPosition(stream, taken.position);
    }
    return entries.length >= batchSize;
  }

  /**
   * Trims a copied stream: up to `position` included (exactly: the stream then holds only what is left to
   * copy), but while fleet listeners follow the stream (its followed flag is up: this writer raises the
   * recorded flag only) only up to `FOLLOWERS_KEEP_MS` before it, so that a follower reading less often than
   * this writer copies still reads every entry.
   */
  private async trim(stream: Copied, position: string): Promise<void> {
    if (position === '0-0') return;
    if (!(await this.events.isFollowed(stream.flag))) return this.events.trimThrough(stream.key, position);
    const ms = idMs(position) - FOLLOWERS_KEEP_MS;
    if (ms > 0) await this.events.trimBefore(stream.key, `${ms}-0`);
  }

  /** Publishes the stream's recorded position beside it, for the backlog of every instance. */
  private async publishPosition(stream: Copied, position: string): Promise<void> {
    if (position !== '0-0') await this.redis.set(positionKey(stream.key), position);
  }

  /** Drops what this instance read and held of a stream: the next pass starts from PostgreSQL's position. */
  private forget(stream: Copied): void {
    stream.state.reset();
    stream.recorded = undefined;
  }

  /**
   * Warns about the streams near `events.streamMaxLen` (once per crossing): on its own timer, every
   * BACKLOG_CHECK_MS, so that a pass waiting for a PostgreSQL that stopped answering does not delay it.
   */
  private async checkBacklogs(): Promise<void> {
    if (this.checkingBacklog || this.stopped) return;
    this.checkingBacklog = true;
    try {
      await Promise.all(this.streams.map((s) => this.checkBacklog(s).catch(() => undefined)));
    } finally {
      this.checkingBacklog = false;
    }
  }

  private async checkBacklog(stream: Copied): Promise<void> {
    const max = this.options.events.streamMaxLen;
    // NOTE: the backlog is at most the stream's length: counted only when that is near the cap.
    const length = await this.events.length(stream.key);
    const backlog = length >= BACKLOG_WARN * max ? await this.backlogOf(stream) : length;
    const near = backlog >= BACKLOG_WARN * max;
    if (near && !stream.warned) {
      this.logger.warn(`history: ${stream.key} holds ${backlog} of at most ${max} entries not yet copied; past that the oldest are dropped`);
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
