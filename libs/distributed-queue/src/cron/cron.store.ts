import { CRON_TICK_TYPE } from '../distributed-queue.constants';
import type { DelayQueueStore } from '../delay/delay-queue.store';
import type { RedisClient } from '../redis/script-loader';
import type { ScheduleDefinition } from './schedule-definition';

/** A tick task's payload. */
export interface TickPayload {
  name: string;
  version: number;
  tick: number;
}

/**
 * What a tick runs (see advance-8.lua): itself ('run'), the last tick due by now for every missed one
 * ('catchUp'), nothing because a catch-up covered it ('superseded') or because the schedule changed ('stale').
 */
export type AdvanceOutcome = { outcome: 'run' | 'catchUp'; run: number } | { outcome: 'superseded' | 'stale' };

/** What the handler of a tick computed (from the definition and Redis's now) for `advance`. */
export interface TickPlan {
  /** Its following tick is due. */
  late: boolean;
  following: number | null;
  /** The last tick due by now (the catch-up's run when every instance was down). */
  latest: number;
  /** The two ticks after now (the chain's end; null: the schedule has no more). */
  ahead: [number | null, number | null];
  /** The tick's task is retried (not its first attempt): a late tick runs late only then (see advance-8.lua). */
  retried: boolean;
}

interface CronScripts {
  dqCronUpsert(...args: (string | number)[]): Promise<[number, number, string]>;
  dqCronAdvance(...args: (string | number)[]): Promise<[number, number]>;
  dqCronRemove(...args: string[]): Promise<[number, string]>;
  dqCronSubmitRun(...args: (string | number)[]): Promise<number>;
}

/** Ticks of a schedule whose run submission is remembered (a retried tick older than these is not run). */
export const SUBMITTED_TICKS_KEPT = 256;
/** How long the remembered ticks outlive the last submit of their schedule (a day: beyond any tick retry). */
export const SUBMITTED_TICKS_TTL_MS = 24 * 3_600_000;

/** How `submitRun` went: submitted now, submitted before (a repeated tick), or the id exists (waiting or running). */
export type SubmitRunOutcome = 'submitted' | 'again' | 'exists';

/** Key names of the schedules: in the tick type's Cluster slot, so a tick and its schedule change together. */
export function cronKeys(prefix: string) {
  const base = `${prefix}:{${prefix}:${CRON_TICK_TYPE}}:schedules`;
  return { definitions: `${base}:defs`, versions: `${base}:versions`, next: `${base}:next`, last: `${base}:last`, caught: `${base}:caught` };
}

/** A stored schedule with its state. */
export interface StoredSchedule {
  name: string;
  definition: ScheduleDefinition;
  version: number;
  nextTickAt: number | null;
  lastTickAt: number | null;
}

const ms = (value: number | null): string => (value === null ? '' : String(value));

/** Thin typed layer over the cron scripts. */
export class CronStore {
  readonly keys: ReturnType<typeof cronKeys>;

  /**
   * @param streamMaxLen entries kept in each type's event stream (as the delay store's); 0 writes no events.
   */
  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    private readonly delay: DelayQueueStore,
    private readonly streamMaxLen = 0,
  ) {
    this.keys = cronKeys(prefix);
  }

  private get scripts(): CronScripts {
    return this.redis as unknown as CronScripts;
  }

  private tickKeys(): string[] {
    const k = this.delay.keys(CRON_TICK_TYPE);
    return [k.waiting, k.jobs, k.seq];
  }

  private get channel(): string {
    return this.delay.keys(CRON_TICK_TYPE).events;
  }

  /** Redis's clock (ms). */
  async now(): Promise<number> {
    const [seconds, micros] = await this.redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  /**
   * Stores a definition with its first two ticks; the same one again changes nothing. Returns whether it
   * changed, and the old version's last pending tick task (for the caller to cancel) when it did.
   */
  async upsert(name: string, definition: ScheduleDefinition, ticks: [number | null, number | null]): Promise<{ changed: boolean; version: number; oldTick: string | null }> {
    const k = this.keys;
    const [changed, version, oldTick] = await this.scripts.dqCronUpsert(
      k.definitions, k.versions, k.next, ...this.tickKeys(), k.last, k.caught, this.channel, name, JSON.stringify(definition), ms(ticks[0]), ms(ticks[1]),
    );
    return { changed: changed === 1, version: Number(version), oldTick: oldTick || null };
  }

  /** Decides what a tick runs and keeps the schedule's chain of ticks two ahead of now (see advance-8.lua). */
  async advance(tick: TickPayload, plan: TickPlan): Promise<AdvanceOutcome> {
    const k = this.keys;
    const [outcome, run] = await this.scripts.dqCronAdvance(
      k.definitions, k.versions, k.next, ...this.tickKeys(), k.last, k.caught, this.channel, tick.name, String(tick.version), String(tick.tick),
      plan.late ? '1' : '0', ms(plan.following), String(plan.latest), ms(plan.ahead[0]), ms(plan.ahead[1]), plan.retried ? '1' : '0',
    );
    if (outcome === 1 || outcome === 2) return { outcome: outcome === 1 ? 'run' : 'catchUp', run: Number(run) };
    return { outcome: outcome === 3 ? 'superseded' : 'stale' };
  }

  /**
   * Submits the run of a tick, `id` of `type` due at the tick, unless this tick's run was submitted before
   * (see submit-run-6.lua): a tick handled twice, whatever the crash between, makes one run.
   */
  async submitRun(type: string, schedule: string, id: string, tick: number, payload: string): Promise<SubmitRunOutcome> {
    const k = this.delay.keys(type);
    const submitted = `${k.jobs.slice(0, -':jobs'.length)}:cron:${schedule}`;
    const outcome = await this.scripts.dqCronSubmitRun(
      k.waiting, k.jobs, k.seq, k.log, k.recorded, submitted, k.events, this.streamMaxLen, id, tick, payload, SUBMITTED_TICKS_KEPT, SUBMITTED_TICKS_TTL_MS,
    );
    return outcome === 1 ? 'submitted' : outcome === 2 ? 'exists' : 'again';
  }

  /** Removes a schedule; returns whether it existed and its pending tick task (for the caller to cancel). */
  async remove(name: string): Promise<{ existed: boolean; oldTick: string | null }> {
    const k = this.keys;
    const [existed, oldTick] = await this.scripts.dqCronRemove(k.definitions, k.versions, k.next, k.last, k.caught, name);
    return { existed: existed === 1, oldTick: oldTick || null };
  }

  /**
   * Of `names`, those Redis holds no version of: never declared there, or lost with its data (a removed
   * schedule keeps its version counter).
   */
  async unknown(names: string[]): Promise<string[]> {
    if (names.length === 0) return [];
    const versions = await this.redis.hmget(this.keys.versions, ...names);
    return names.filter((_, i) => versions[i] === null);
  }

  /** A schedule's definition and version, or null. */
  async definition(name: string): Promise<{ definition: ScheduleDefinition; version: number } | null> {
    const [json, version] = await Promise.all([this.redis.hget(this.keys.definitions, name), this.redis.hget(this.keys.versions, name)]);
    return json ? { definition: JSON.parse(json) as ScheduleDefinition, version: Number(version) } : null;
  }

  /** Every schedule, by name. */
  async list(): Promise<StoredSchedule[]> {
    const k = this.keys;
    const [defs, versions, next, last] = await Promise.all([k.definitions, k.versions, k.next, k.last].map((key) => this.redis.hgetall(key)));
    return Object.keys(defs).sort().map((name) => stored(name, defs[name], versions[name], next[name], last[name]));
  }

  /** One schedule, or null: its own fields only (an upsert reads its schedule back at any number of them). */
  async one(name: string): Promise<StoredSchedule | null> {
    const k = this.keys;
    const [json, version, next, last] = await Promise.all([k.definitions, k.versions, k.next, k.last].map((key) => this.redis.hget(key, name)));
    return json ? stored(name, json, version, next, last) : null;
  }
}

function stored(name: string, json: string, version: string | null | undefined, next: string | null | undefined, last: string | null | undefined): StoredSchedule {
  const definition = JSON.parse(json) as ScheduleDefinition;
  // NOTE: "<version>:<furthest tick added>:<next tick>": the chain runs two ticks ahead of the next.
  const nextTickAt = next?.split(':')[2] ? Number(next.split(':')[2]) : null;
  return { name, definition, version: Number(version ?? 0), nextTickAt, lastTickAt: last ? Number(last) : null };
}
