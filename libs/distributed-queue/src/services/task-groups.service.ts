import { Injectable } from '@nestjs/common';
import { checkedTypeOf, type TaskContract } from '../contracts/task-contract';
import { DelayQueueStore } from '../delay/delay-queue.store';
import type { GroupField } from '../delay/groups.store';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { InvalidArgumentError } from '../errors';
import type { RateLimitOptions, TaskGroup } from '../interfaces';
import { checkRateLimit, encodeRateLimit, MAX_GLOBAL_CONCURRENCY, resolveRateLimit } from '../options/resolve-limits';
import { asArgument } from './queue-control.service';
import { checkGroup, checkLimit, checkOffset } from './task-input';
import { isOrderedType } from './type-kind';

type AnyType = string | TaskContract<unknown, boolean>;

/** The largest weight of a group in the rotation. */
export const MAX_GROUP_WEIGHT = 1000;

function checkCount(value: unknown, name: string, max: number): void {
  if (value !== null && (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max)) {
    throw new InvalidArgumentError(name, `must be an integer from 1 to ${max} or null, got ${String(value)}`);
  }
}

/**
 * The groups of delay-queue types (fair share per tenant, see `SubmitOptions.group`): pause and resume one
 * group, its fleet-wide concurrency and its weight in the rotation (kept in Redis, for every instance, from
 * their next reserve), its counts, and the groups with the largest backlog page by page.
 */
@Injectable()
export class TaskGroupsService {
  /** @internal Nest creates it (dependency injection): inject the class, do not construct it. */
  constructor(
    private readonly store: DelayQueueStore,
    private readonly explorer: DistributedQueueExplorer,
  ) {}

  /**
   * Starts nothing more of the group until `resumeGroup` (its running tasks finish); kept in Redis, so a
   * restart keeps it paused. Its tasks keep waiting, and the other groups take its turns.
   * @throws InvalidArgumentError for a bad group or an ordered type
   */
  async pauseGroup(type: AnyType, group: string): Promise<void> {
    await this.set(type, group, 'p', '1');
  }

  /** Lets a paused group start tasks again; wakes the workers. */
  async resumeGroup(type: AnyType, group: string): Promise<void> {
    await this.set(type, group, 'p', '');
  }

  /**
   * At most `n` of the group's tasks hold a lease at once across the fleet (`null`: back to the type's
   * `groupConcurrency`, if any). Raising it lets the group in at once.
   */
  async setGroupConcurrency(type: AnyType, group: string, n: number | null): Promise<void> {
    checkCount(n, 'n', MAX_GLOBAL_CONCURRENCY);
    await this.set(type, group, 'c', n === null ? '' : String(n));
  }

  /**
   * The group's weight in the rotation (`null`: 1): with weight 3 it gets three turns where a group of weight
   * 1 gets one, while both have due tasks.
   */
  async setGroupWeight(type: AnyType, group: string, weight: number | null): Promise<void> {
    checkCount(weight, 'weight', MAX_GROUP_WEIGHT);
    await this.set(type, group, 'w', weight === null ? '' : String(weight));
  }

  /**
   * The group's own rate limit (`null`: back to the type's `groupRateLimit`, if any): it starts at most `max`
   * of its tasks per `perMs` across the fleet (GCRA, as the type's rate limit; a change starts afresh).
   */
  async setGroupRateLimit(type: AnyType, group: string, limit: RateLimitOptions | null): Promise<void> {
    if (limit !== null) asArgument(() => checkRateLimit(limit, 'limit'));
    await this.set(type, group, 'r', limit === null ? '' : encodeRateLimit(resolveRateLimit(limit)));
  }

  /**
   * Removes one group's waiting tasks, due and delayed, with their records; its running and dead tasks are
   * not touched. Bounded steps (each a group queue's batch or a page of the type's grouped tasks): no step
   * holds Redis long, and the whole costs O(the type's grouped tasks). Returns how many were removed.
   */
  async drainGroup(type: AnyType, group: string): Promise<number> {
    return this.store.groups.drain(this.delayType(type), checkGroup(group, 'group'));
  }

  /** One group's counts and settings (a group nobody used: all zero). */
  async getGroup(type: AnyType, group: string): Promise<TaskGroup> {
    return this.store.groups.get(this.delayType(type), checkGroup(group, 'group'));
  }

  /**
   * The groups with waiting tasks, the largest backlog first, page by page: O(log n + limit) at any offset,
   * whatever the number of groups; `total` counts the groups with waiting tasks.
   * @default offset 0, limit 100
   * @throws InvalidArgumentError for an offset that is not an integer from 0, or a limit not from 1 to 1000
   */
  async getGroups(
    type: AnyType,
    page: { offset?: number; limit?: number } = {},
  ): Promise<{
    /** Groups of the type with waiting tasks. */
    total: number;
    /** The page's groups, the largest backlog first. */
    groups: TaskGroup[];
  }> {
    const { offset = 0, limit = 100 } = page ?? {};
    checkOffset(offset);
    checkLimit(limit);
    return this.store.groups.list(this.delayType(type), offset, limit);
  }

  private async set(type: AnyType, group: string, field: GroupField, value: string): Promise<void> {
    await this.store.groups.set(this.delayType(type), checkGroup(group, 'group'), field, value);
  }

  private delayType(type: AnyType): string {
    const name = checkedTypeOf(type);
    if (isOrderedType(this.explorer, type)) throw new InvalidArgumentError('type', `"${name}" is ordered: groups are for delay-queue types`);
    return name;
  }
}
