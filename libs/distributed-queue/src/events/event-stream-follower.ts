import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DISTRIBUTED_QUEUE_RESOLVED_OPTIONS } from '../distributed-queue.constants';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { shutdownCall } from '../runtime/graceful-stop';
import { StartupSteps } from '../runtime/startup-steps';
import { eventsOfEntry } from './event-entry';
import { EventStreams, type EventStreamRef } from './event-streams';
import { TaskEventBus } from './task-event-bus';
import { reportFailure } from '../redis/outage-log';

/** Entries read per stream per call. */
const READ_COUNT = 500;

interface FollowedStream extends EventStreamRef {
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
  private followed: FollowedStream[] = [];
  private timer?: NodeJS.Timeout;
  private lowerFlags?: () => void;
  private reading?: Promise<void>;
  private stopped = false;
  private failing = false;

  constructor(
    private readonly bus: TaskEventBus,
    private readonly explorer: DistributedQueueExplorer,
    private readonly streams: EventStreams,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    private readonly startup: StartupSteps,
  ) {}

  onApplicationBootstrap(): Promise<void> {
    if (this.bus.fleetTypes().length === 0) return Promise.resolve();
    return this.startup.run('event listeners', () => this.start());
  }

  private async start(): Promise<void> {
    const refs = await this.toFollow();
    if (refs.length === 0) return;
    // NOTE: the flags first: completions logged from now on come after the positions read next. (Lowered
    // first: a step that failed part-way runs again with waitForRedis.)
    this.lowerFlags?.();
    this.lowerFlags = await this.streams.keepFlagsRaised(refs);
    this.followed = await Promise.all(refs.map(async (s) => ({ ...s, last: await this.streams.lastId(s.key) })));
    this.schedule(this.options.events.followIntervalMs);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.startup.halt();
    this.stopped = true;
    clearTimeout(this.timer);
    this.lowerFlags?.();
    await shutdownCall(this.reading, 'reading event streams').catch(() => undefined);
  }

  /** The streams to follow: those of the types with fleet listeners (every partition's once for ordered ones). */
  private async toFollow(): Promise<EventStreamRef[]> {
    const wanted = this.bus.fleetTypes();
    if (wanted.length === 0) return [];
    return this.streams.ofTypes(wanted.includes('*') ? this.explorer.knownTypes() : wanted);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.reading = this.readAll().then((more) => this.schedule(more ? 0 : this.options.events.followIntervalMs));
    }, ms);
  }

  /** Reads every stream once; true when one of them may hold more. */
  private async readAll(): Promise<boolean> {
    const results = await Promise.all(this.followed.map((s) => this.read(s)));
    return results.some((full) => full);
  }

  private async read(stream: FollowedStream): Promise<boolean> {
    let entries;
    try {
      entries = await this.streams.read(stream.key, stream.last, READ_COUNT);
      if (this.failing) this.logger.log('event streams readable again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) reportFailure(this.logger, 'reading event streams', error, `reading event streams failed (retrying): ${(error as Error).message}`);
      this.failing = true;
      return false;
    }
    for (const entry of entries) {
      for (const event of eventsOfEntry(entry, stream.type)) this.bus.emit(event);
      stream.last = entry[0];
    }
    return entries.length >= READ_COUNT;
  }
}
