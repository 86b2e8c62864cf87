import type { TaskContract } from '../contracts/task-contract';

/**
 * What happens to ticks that came due while no instance ran (all down): `'runOnce'` runs the last one due by
 * the return once (not the oldest, never all); `'skip'` runs none, nor any tick handled after its following
 * tick was due (such as the tick of an instance that died holding it).
 */
export type MissedTicks = 'runOnce' | 'skip';

/**
 * A recurring schedule: give `cron` or `everyMs`. Each tick submits one task of `type` with `payload`, whose
 * id is `<name>@<tick ms>`: any number of instances make one run per tick.
 */
export interface ScheduleOptions<P = unknown> {
  /** A cron expression (5 fields, or 6 with seconds first), read by `cron-parser`. */
  cron?: string;
  /** Every this many milliseconds (at least 1000), on multiples of it since `startAt` (default: since the epoch). */
  everyMs?: number;
  /** The task type each tick submits: a type string, or a (not ordered) contract from `defineTask`, which types `payload`. */
  type: string | TaskContract<P>;
  /** The payload of each tick's task. @default null */
  payload?: P;
  /** IANA time zone of `cron` (e.g. 'Europe/Berlin'); DST is cron-parser's. @default 'UTC' */
  timeZone?: string;
  /** No tick before this time (epoch ms or Date). @default none */
  startAt?: number | Date;
  /** No tick after this time (epoch ms or Date). @default none */
  endAt?: number | Date;
  /** Ticks missed while every instance was down: the last one runs once on return, or none (see `MissedTicks`). @default 'runOnce' */
  missedTicks?: MissedTicks;
}

/** A schedule as stored: what `list()` returns. */
export interface ScheduleInfo {
  /** The schedule's name. */
  name: string;
  /** Its cron expression (cron schedules). */
  cron?: string;
  /** Its period, ms (`everyMs` schedules). */
  everyMs?: number;
  /** The task type each tick submits. */
  type: string;
  /** The payload of each tick's task. */
  payload: unknown;
  /** The time zone of `cron`. */
  timeZone?: string;
  /** No tick before this time (epoch ms). */
  startAt?: number;
  /** No tick after this time (epoch ms). */
  endAt?: number;
  /** What happens to ticks missed while every instance was down. */
  missedTicks: MissedTicks;
  /** Bumped by every change of the definition. */
  version: number;
  /** The next tick (epoch ms), or null when the schedule has no more. */
  nextTickAt: number | null;
  /** The last tick handled (epoch ms), or null. */
  lastTickAt: number | null;
}

/** Options of `@DistributedCron`. */
export interface DistributedCronOptions {
  /** The schedule's name, unique in the fleet. @default '<Class>.<method>' */
  name?: string;
  /** IANA time zone of the expression. @default 'UTC' */
  timeZone?: string;
  /** @default 'runOnce' */
  missedTicks?: MissedTicks;
  /** The method's time budget per run (its signal aborts after it). @default the module's `defaults.timeoutMs` */
  timeoutMs?: number;
  /**
   * Runs per tick before the tick's run is dead-lettered. A run cut by a crash (its instance died, its lease
   * expired) counts as one and is run again on another instance; so does a run that throws or times out.
   * With 1, a crash dead-letters the run with `LeaseExpiredError`.
   * @default 3
   */
  maxAttempts?: number;
}
