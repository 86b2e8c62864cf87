import type { TaskGroup } from '../interfaces';
import { decodeRateLimit } from '../options/resolve-limits';
import { delayQueueKeys } from '../redis/queue-keys';
import type { RedisClient } from '../redis/script-loader';

type Arg = string | number;
interface GroupScripts {
  dqDelayGroupSet(...args: Arg[]): Promise<number>;
  dqDelayGroupsList(...args: Arg[]): Promise<(string | number)[]>;
  dqDelayGroupGet(...args: Arg[]): Promise<(string | number)[]>;
  dqDelayGroupDrain(...args: Arg[]): Promise<[number, string]>;
}

/** A group's setting in Redis: 'p' paused, 'c' concurrency, 'w' weight (see `scripts/includes/groups.lua`). */
export type GroupField = 'p' | 'c' | 'w' | 'r';

function group(name: string, [waiting, running, paused, concurrency, weight, rate]: Arg[]): Omit<TaskGroup, 'due'> {
  const out: Omit<TaskGroup, 'due'> = { group: name, waiting: Number(waiting), running: Number(running), paused: Number(paused) === 1 };
  if (concurrency !== '') out.concurrency = Number(concurrency);
  if (weight !== '') out.weight = Number(weight);
  const rateLimit = decodeRateLimit(String(rate));
  if (rateLimit) out.rateLimit = rateLimit;
  return out;
}

/** The groups of delay-queue types (fair share per group): settings, counts, the top groups by backlog. */
export class GroupsStore {
  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
  ) {}

  private get scripts(): GroupScripts {
    return this.client as unknown as GroupScripts;
  }

  /** Sets (or, with '', removes) a group's setting; the group enters or leaves the rotation as it now may. */
  async set(type: string, name: string, field: GroupField, value: string): Promise<void> {
    const k = delayQueueKeys(this.prefix, type);
    await this.scripts.dqDelayGroupSet(k.waiting, name, field, value, k.events);
  }

  /** One page of the groups by backlog, largest first, and how many groups have a backlog. */
  async list(type: string, offset: number, limit: number): Promise<{ total: number; groups: Omit<TaskGroup, 'due'>[] }> {
    const [total, ...flat] = await this.scripts.dqDelayGroupsList(delayQueueKeys(this.prefix, type).waiting, offset, limit);
    const groups = [];
    for (let i = 0; i < flat.length; i += 7) groups.push(group(String(flat[i]), flat.slice(i + 1, i + 7)));
    return { total: Number(total), groups };
  }

  /**
   * Removes one group's waiting tasks (due and delayed) in bounded steps: its queue, then the type's grouped
   * tasks one HSCAN page at a time. Returns how many.
   */
  async drain(type: string, name: string): Promise<number> {
    const k = delayQueueKeys(this.prefix, type);
    let total = 0;
    let cursor = '0';
    let removed: number;
    do {
      [removed, cursor] = await this.scripts.dqDelayGroupDrain(k.waiting, k.jobs, k.errors, name, cursor, 1000);
      total += Number(removed);
    } while (cursor !== '0' || Number(removed) > 0);
    return total;
  }

  /** One group's counts and settings. */
  async get(type: string, name: string): Promise<TaskGroup> {
    const [waiting, due, ...rest] = await this.scripts.dqDelayGroupGet(delayQueueKeys(this.prefix, type).waiting, name);
    return { ...group(name, [waiting, ...rest]), due: Number(due) };
  }
}
