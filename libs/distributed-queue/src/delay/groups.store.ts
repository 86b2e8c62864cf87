import type { TaskGroup } from '../interfaces';
import { delayQueueKeys } from '../redis/queue-keys';
import type { RedisClient } from '../redis/script-loader';

type Arg = string | number;
interface GroupScripts {
  dqDelayGroupSet(...args: Arg[]): Promise<number>;
  dqDelayGroupsList(...args: Arg[]): Promise<(string | number)[]>;
  dqDelayGroupGet(...args: Arg[]): Promise<(string | number)[]>;
}

/** A group's setting in Redis: 'p' paused, 'c' concurrency, 'w' weight (see `scripts/includes/groups.lua`). */
export type GroupField = 'p' | 'c' | 'w';

function group(name: string, waiting: Arg, running: Arg, paused: Arg, concurrency: Arg, weight: Arg): Omit<TaskGroup, 'due'> {
  const out: Omit<TaskGroup, 'due'> = { group: name, waiting: Number(waiting), running: Number(running), paused: Number(paused) === 1 };
  if (concurrency !== '') out.concurrency = Number(concurrency);
  if (weight !== '') out.weight = Number(weight);
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
    for (let i = 0; i < flat.length; i += 6) groups.push(group(String(flat[i]), flat[i + 1], flat[i + 2], flat[i + 3], flat[i + 4], flat[i + 5]));
    return { total: Number(total), groups };
  }

  /** One group's counts and settings. */
  async get(type: string, name: string): Promise<TaskGroup> {
    const [waiting, due, running, paused, concurrency, weight] = await this.scripts.dqDelayGroupGet(delayQueueKeys(this.prefix, type).waiting, name);
    return { ...group(name, waiting, running, paused, concurrency, weight), due: Number(due) };
  }
}
