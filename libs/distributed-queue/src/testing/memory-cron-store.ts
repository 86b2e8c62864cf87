import { CRON_TICK_TYPE } from '../distributed-queue.constants';
import { CronStore, type AdvanceOutcome, type StoredSchedule, type SubmitRunOutcome, type TickPayload, type TickPlan } from '../cron/cron.store';
import { nextTick, type ScheduleDefinition } from '../cron/schedule-definition';
import { noRedis } from '../redis/no-redis';
import type { MemoryEngine } from './memory-engine';
import type { MemoryDelayStore } from './memory-delay-store';

interface MemorySchedule {
  json: string;
  definition?: ScheduleDefinition;
  version: number;
  /** The furthest tick whose task was added, and the next one after the last handled. */
  furthest: number | null;
  next: number | null;
  last: number | null;
  /** A catch-up's run and the tick that made it (every tick up to the run is covered). */
  caught?: { run: number; from: number };
  /** Ticks whose run was submitted. */
  submitted: Set<number>;
}

/**
 * The schedules of the testing module, as the cron scripts keep them (upsert-8, advance-8, submit-run-6,
 * remove-5): each schedule's chain of tick tasks (the internal tick type, in the in-memory delay queue) runs
 * two ticks ahead, and the real `CronTickHandler` handles each tick. A removed schedule keeps its version.
 */
export class MemoryCronStore extends CronStore {
  private readonly schedules = new Map<string, MemorySchedule>();

  constructor(
    private readonly engine: MemoryEngine,
    delay: MemoryDelayStore,
  ) {
    super(noRedis(), 'memory', delay);
  }

  override async now(): Promise<number> {
    return this.engine.clock.now();
  }

  override async upsert(name: string, definition: ScheduleDefinition, ticks: [number | null, number | null]): Promise<{ changed: boolean; version: number; oldTick: string | null }> {
    const json = JSON.stringify(definition);
    const known = this.schedules.get(name);
    if (known?.definition && known.json === json && known.next !== null) return { changed: false, version: known.version, oldTick: null };
    const oldTick = known?.definition && known.furthest !== null ? tickId(name, known.version, known.furthest) : null;
    const schedule: MemorySchedule = { json, definition, version: (known?.version ?? 0) + 1, furthest: null, next: ticks[0], last: null, submitted: new Set() };
    this.schedules.set(name, schedule);
    this.addTicks(name, schedule, ticks);
    return { changed: true, version: schedule.version, oldTick };
  }

  override async advance(tick: TickPayload, plan: TickPlan): Promise<AdvanceOutcome> {
    const schedule = this.schedules.get(tick.name);
    if (!schedule?.definition || schedule.version !== tick.version) return { outcome: 'stale' };
    let decided: AdvanceOutcome;
    if (schedule.caught && tick.tick <= schedule.caught.run && tick.tick !== schedule.caught.from) decided = { outcome: 'superseded' };
    else if (!plan.late || plan.retried) decided = { outcome: 'run', run: tick.tick };
    else if (plan.following !== null && schedule.last !== null && schedule.last >= plan.following) decided = { outcome: 'superseded' };
    else {
      schedule.caught = { run: plan.latest, from: tick.tick };
      decided = { outcome: 'catchUp', run: plan.latest };
    }
    schedule.last = Math.max(schedule.last ?? tick.tick, tick.tick);
    this.addTicks(tick.name, schedule, plan.ahead);
    schedule.next = plan.ahead[0];
    return decided;
  }

  override async submitRun(type: string, _schedule: string, id: string, tick: number, payload: string): Promise<SubmitRunOutcome> {
    const schedule = this.schedules.get(_schedule);
    if (schedule?.submitted.has(tick)) return 'again';
    const { created } = this.engine.add(type, { id, due: { at: tick }, payload });
    if (!created) return 'exists';
    schedule?.submitted.add(tick);
    return 'submitted';
  }

  override async remove(name: string): Promise<{ existed: boolean; oldTick: string | null }> {
    const schedule = this.schedules.get(name);
    if (!schedule?.definition) return { existed: false, oldTick: null };
    const oldTick = schedule.furthest !== null ? tickId(name, schedule.version, schedule.furthest) : null;
    // NOTE: the version stays (a new schedule of the name gets the next one: old ticks stay stale)
    this.schedules.set(name, { json: '', version: schedule.version, furthest: null, next: null, last: null, submitted: new Set() });
    return { existed: true, oldTick };
  }

  override async unknown(names: string[]): Promise<string[]> {
    return names.filter((name) => !this.schedules.has(name));
  }

  override async definition(name: string): Promise<{ definition: ScheduleDefinition; version: number } | null> {
    const schedule = this.schedules.get(name);
    return schedule?.definition ? { definition: schedule.definition, version: schedule.version } : null;
  }

  override async list(): Promise<StoredSchedule[]> {
    return [...this.schedules.keys()].sort().map((name) => this.stored(name)).filter((s): s is StoredSchedule => s !== null);
  }

  override async one(name: string): Promise<StoredSchedule | null> {
    return this.stored(name);
  }

  private stored(name: string): StoredSchedule | null {
    const schedule = this.schedules.get(name);
    if (!schedule?.definition) return null;
    return { name, definition: schedule.definition, version: schedule.version, nextTickAt: schedule.next, lastTickAt: schedule.last };
  }

  /**
   * Starts every schedule's chain of ticks again from now (`TestQueue.reset` forgot the tick tasks): the
   * next two ticks after now, as an upsert makes them.
   */
  rearm(): void {
    const now = this.engine.clock.now();
    for (const [name, schedule] of this.schedules) {
      if (!schedule.definition) continue;
      const first = nextTick(schedule.definition, now);
      Object.assign(schedule, { furthest: null, next: first, caught: undefined });
      this.addTicks(name, schedule, [first, first === null ? null : nextTick(schedule.definition, first)]);
    }
  }

  /** Adds the tick tasks of `ticks` beyond the chain's end. */
  private addTicks(name: string, schedule: MemorySchedule, ticks: (number | null)[]): void {
    for (const tick of ticks) {
      if (tick === null || (schedule.furthest !== null && tick <= schedule.furthest)) continue;
      const payload: TickPayload = { name, version: schedule.version, tick };
      this.engine.add(CRON_TICK_TYPE, { id: tickId(name, schedule.version, tick), due: { at: tick }, payload: JSON.stringify(payload) });
      schedule.furthest = tick;
    }
  }
}

/** A tick task's id: unique per schedule version and tick. */
const tickId = (name: string, version: number, tick: number): string => `${name}:${version}:${tick}`;
