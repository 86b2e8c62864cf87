import type { DiscoveredWorker } from '../distributed-queue.explorer';
import { GroupsStore, type GroupField } from '../delay/groups.store';
import type { RateLimitOptions, TaskGroup } from '../interfaces';
import { decodeRateLimit } from '../options/resolve-limits';
import { noRedis } from '../redis/no-redis';
import type { MemoryEngine } from './memory-engine';
import type { MemoryTask } from './memory-type';

interface GroupState {
  paused: boolean;
  concurrency?: number;
  weight?: number;
  rate?: Required<RateLimitOptions>;
  /** Stride scheduling: the group's pass, and whether it is in the rotation (has due tasks). */
  pass: number;
  rotating: boolean;
  /** Its rate limit's arrival time (GCRA, test clock). */
  tat: number;
}

/**
 * The groups of the testing module's delay-queue types, as includes/groups.lua serves them: due tasks of a
 * type with groups go round-robin, weighted (stride scheduling: a group's pass moves on by 1 / weight per
 * task; the lowest pass goes next; a group that gets due tasks joins at the current pass); a paused group,
 * one at its concurrency or held back by its rate limit takes no turn. Tasks without a group share `''`.
 */
export class MemoryGroups extends GroupsStore {
  private readonly types = new Map<string, { groups: Map<string, GroupState>; pass: number }>();

  constructor(private readonly engine: MemoryEngine) {
    super(noRedis(), 'memory');
  }

  /** Forgets every group's settings and turn (`TestQueue.reset`). */
  clear(): void {
    this.types.clear();
  }

  /** Forgets the groups of one type (`obliterate`). */
  forget(type: string): void {
    this.types.delete(type);
  }

  private of(type: string): { groups: Map<string, GroupState>; pass: number } {
    let state = this.types.get(type);
    if (!state) this.types.set(type, (state = { groups: new Map(), pass: 0 }));
    return state;
  }

  private group(type: string, name: string): GroupState {
    const { groups } = this.of(type);
    let state = groups.get(name);
    if (!state) groups.set(name, (state = { paused: false, pass: 0, rotating: false, tat: 0 }));
    return state;
  }

  override async set(type: string, name: string, field: GroupField, value: string): Promise<void> {
    const group = this.group(type, name);
    if (field === 'p') group.paused = value === '1';
    else if (field === 'c') group.concurrency = value === '' ? undefined : Number(value);
    else if (field === 'w') group.weight = value === '' ? undefined : Number(value);
    else group.rate = decodeRateLimit(value) ?? undefined;
    this.engine.changed();
  }

  override async list(type: string, offset: number, limit: number): Promise<{ total: number; groups: Omit<TaskGroup, 'due'>[] }> {
    const names = new Set(this.waitingOf(type).map((t) => t.group!));
    // NOTE: as the backlog set's reverse range gives them: the largest first, equal ones by name, descending
    const groups = [...names].map((name) => this.view(type, name)).sort((a, b) => b.waiting - a.waiting || (a.group < b.group ? 1 : -1));
    return { total: groups.length, groups: groups.slice(offset, offset + limit).map(({ due: _due, ...rest }) => rest) };
  }

  override async drain(type: string, name: string): Promise<number> {
    const queue = this.engine.type(type);
    const drained = this.waitingOf(type).filter((t) => t.group === name);
    for (const task of drained) {
      queue.remove(task);
      this.engine.ended(task, 'cancelled', task.attempts);
    }
    return drained.length;
  }

  override async get(type: string, name: string): Promise<TaskGroup> {
    return this.view(type, name);
  }

  /**
   * The order in which `due` tasks (in the type's order) start, at most `count`, across their groups; `running`
   * counts the type's running tasks per group. Charges the rate limits and passes of those it returns.
   */
  pick(worker: DiscoveredWorker, due: MemoryTask[], count: number, running: Map<string, number>, now: number): MemoryTask[] {
    if (!due.some((t) => t.group !== undefined)) return due.slice(0, count);
    const state = this.of(worker.type);
    const byGroup = new Map<string, MemoryTask[]>();
    for (const task of due) {
      const name = task.group ?? '';
      const list = byGroup.get(name);
      if (list) list.push(task);
      else byGroup.set(name, [task]);
    }
    for (const [name, group] of state.groups) if (!byGroup.has(name)) group.rotating = false;
    const picked: MemoryTask[] = [];
    while (picked.length < count) {
      let best: [string, GroupState] | undefined;
      for (const [name, tasks] of byGroup) {
        const group = this.group(worker.type, name);
        if (!group.rotating) Object.assign(group, { rotating: true, pass: state.pass });
        const limit = group.concurrency ?? worker.options.groupConcurrency;
        if (tasks.length === 0 || group.paused || (limit !== undefined && (running.get(name) ?? 0) >= limit) || !this.allowed(worker, group, now)) continue;
        // NOTE: the rotation is a sorted set by pass: equal passes go by group name
        if (!best || group.pass < best[1].pass || (group.pass === best[1].pass && name < best[0])) best = [name, group];
      }
      if (!best) break;
      const [name, group] = best;
      picked.push(byGroup.get(name)!.shift()!);
      running.set(name, (running.get(name) ?? 0) + 1);
      this.charge(worker, group, now);
      state.pass = group.pass;
      group.pass += 1 / (group.weight ?? 1);
    }
    return picked;
  }

  /** The earliest time a group's rate limit lets its next task in (null: no group is held back). */
  nextAllowedAt(worker: DiscoveredWorker, now: number): number | null {
    let next: number | null = null;
    for (const group of this.of(worker.type).groups.values()) {
      const rate = group.rate ?? worker.options.groupRateLimit;
      if (!rate || !group.rotating) continue;
      const at = Math.ceil(group.tat - rate.burst * (rate.perMs / rate.max));
      if (at > now && (next === null || at < next)) next = at;
    }
    return next;
  }

  /** Whether a group's rate limit lets a task in now. */
  private allowed(worker: DiscoveredWorker, group: GroupState, now: number): boolean {
    const rate = group.rate ?? worker.options.groupRateLimit;
    return !rate || Math.max(group.tat, now) - rate.burst * (rate.perMs / rate.max) <= now;
  }

  private charge(worker: DiscoveredWorker, group: GroupState, now: number): void {
    const rate = group.rate ?? worker.options.groupRateLimit;
    if (rate) group.tat = Math.max(group.tat, now) + rate.perMs / rate.max;
  }

  private waitingOf(type: string): MemoryTask[] {
    return [...this.engine.type(type).tasks.values()].filter((t) => t.state === 'waiting' && t.group !== undefined);
  }

  private view(type: string, name: string): TaskGroup {
    const group = this.group(type, name);
    const now = this.engine.clock.now();
    const tasks = [...this.engine.type(type).tasks.values()].filter((t) => t.group === name);
    const waiting = tasks.filter((t) => t.state === 'waiting');
    const view: TaskGroup = { group: name, waiting: waiting.length, due: waiting.filter((t) => t.dueAt <= now).length, running: tasks.filter((t) => t.state === 'running').length, paused: group.paused };
    if (group.concurrency !== undefined) view.concurrency = group.concurrency;
    if (group.weight !== undefined) view.weight = group.weight;
    if (group.rate) view.rateLimit = group.rate;
    return view;
  }
}
