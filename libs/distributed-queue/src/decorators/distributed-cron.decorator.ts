import { DISTRIBUTED_CRON_METADATA } from '../distributed-queue.constants';
import type { DistributedCronOptions } from '../interfaces';

/** What `@DistributedCron` records on a method. */
export interface DistributedCronMetadata {
  cron: string;
  options: DistributedCronOptions;
}

/** What a `@DistributedCron` method is called with (then its `AbortSignal`). */
export interface CronRun {
  /** The schedule's name. */
  schedule: string;
  /** The tick this run is for (epoch ms). */
  tickAt: number;
  /** 1 for the first run of this tick. */
  attempt: number;
}

/**
 * Runs the method on a cron schedule once per tick across every instance of the application (not once per
 * instance, as `@Cron` does): each tick is a task of the delay queue. The expression has 5 fields, or 6 with
 * seconds first; the method gets a `CronRun` and an `AbortSignal`. A bad expression or time zone fails the
 * start with `InvalidScheduleError` naming the schedule.
 * @example `@DistributedCron('0 *\/5 * * * *', { name: 'sweep', timeZone: 'Europe/Berlin' })`
 */
export function DistributedCron(cron: string, options: DistributedCronOptions = {}): MethodDecorator {
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(DISTRIBUTED_CRON_METADATA, { cron, options } satisfies DistributedCronMetadata, descriptor.value as object);
    return descriptor;
  };
}
