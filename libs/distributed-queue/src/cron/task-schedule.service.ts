import { Inject, Injectable, Logger } from '@nestjs/common';
import { CRON_TICK_TYPE, DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, isInternalType } from '../distributed-queue.constants';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { InvalidScheduleError, UnknownTaskTypeError } from '../errors';
import { quote } from '../errors/quote';
import { DelayQueueStore } from '../delay/delay-queue.store';
import type { ScheduleInfo, ScheduleOptions } from '../interfaces';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import type { RedisClient } from '../redis/script-loader';
import { CronStore, type StoredSchedule } from './cron.store';
import { checkScheduleName, nextTick, toDefinition, type ScheduleDefinition } from './schedule-definition';

function toInfo({ name, definition, version, nextTickAt, lastTickAt }: StoredSchedule): ScheduleInfo {
  const { payload, ...rest } = definition;
  return { name, ...rest, payload: JSON.parse(payload), version, nextTickAt, lastTickAt };
}

/**
 * Recurring tasks across the fleet: `upsert` a schedule (cron or every N ms) that submits a task of a type
 * on each tick, `remove` it, `list` them. Ticks are tasks of the delay queue: any number of instances make
 * one run per tick. Ticks are handled by the instances that run schedules (`schedules: true`, or any with a
 * `@DistributedCron` method).
 */
@Injectable()
export class TaskScheduleService {
  private readonly logger = new Logger('DistributedQueue');
  /** @internal The schedules' store (the cron orchestrator shares it). */
  readonly store: CronStore;

  /** @internal Nest creates it (dependency injection): inject the class, do not construct it. */
  constructor(
    private readonly delay: DelayQueueStore,
    private readonly explorer: DistributedQueueExplorer,
    @Inject(DISTRIBUTED_QUEUE_REDIS) redis: RedisClient,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
  ) {
    this.store = new CronStore(redis, options.keyPrefix, delay, options.events.stream ? options.events.streamMaxLen : 0);
  }

  /**
   * Creates or replaces a schedule, atomically: its next tick is the first after now (Redis clock) and a
   * pending tick of the old definition does nothing. The same definition again changes nothing.
   * @throws InvalidScheduleError naming the schedule and the problem (an unknown option name, an internal or
   * ordered type too); UnknownTaskTypeError for a type no worker here runs and not in `types` (`strictTypes`)
   */
  async upsert<P>(name: string, schedule: ScheduleOptions<P>): Promise<ScheduleInfo> {
    const definition = toDefinition(name, schedule, this.options.maxPayloadBytes);
    this.checkRunType(name, definition.type);
    return this.write(name, definition);
  }

  /**
   * @internal The cron orchestrator's upsert of a `@DistributedCron` schedule, whose runs are of the library's
   * internal run type of the schedule.
   */
  async declare(name: string, schedule: ScheduleOptions): Promise<ScheduleInfo> {
    return this.write(name, toDefinition(name, schedule, this.options.maxPayloadBytes));
  }

  private async write(name: string, definition: ScheduleDefinition): Promise<ScheduleInfo> {
    const first = nextTick(definition, await this.store.now());
    const { changed, oldTick } = await this.store.upsert(name, definition, [first, first === null ? null : nextTick(definition, first)]);
    if (oldTick) {
      await this.delay.cancel(CRON_TICK_TYPE, oldTick).catch((error: Error) => {
        this.logger.warn(`Schedule "${name}": the replaced tick ${oldTick} stays (it will do nothing): ${error.message}`);
      });
    }
    if (changed) this.logger.log(`Schedule "${name}" ${oldTick ? 'replaced' : 'set'}: next tick ${first === null ? 'none' : new Date(first).toISOString()}`);
    return (await this.get(name))!;
  }

  /** The type a schedule submits must be one an application runs as a delay task, as `submit` requires. */
  private checkRunType(name: string, type: string): void {
    if (isInternalType(type)) throw new InvalidScheduleError(name, `${quote(type)} is an internal type of the library`);
    if (this.options.strictTypes && !this.explorer.isKnown(type)) throw new UnknownTaskTypeError(type);
    if (this.explorer.isOrdered(type)) throw new InvalidScheduleError(name, `type ${quote(type)} is ordered: a schedule submits delay tasks`);
  }

  /** Removes a schedule: no tick of it runs any more. Resolves false when there was none. */
  async remove(name: string): Promise<boolean> {
    checkScheduleName(name);
    const { existed, oldTick } = await this.store.remove(name);
    if (oldTick) await this.delay.cancel(CRON_TICK_TYPE, oldTick).catch(() => undefined);
    return existed;
  }

  /** Every schedule, by name, with its next and last tick. */
  async list(): Promise<ScheduleInfo[]> {
    return (await this.store.list()).map(toInfo);
  }

  /** One schedule, or null. */
  async get(name: string): Promise<ScheduleInfo | null> {
    checkScheduleName(name);
    const found = await this.store.one(name);
    return found && toInfo(found);
  }
}
