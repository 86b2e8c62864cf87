import type { RateLimitOptions } from './task-worker-options.interface';

/** One limit of a type: what the workers' options configure, an operator's override, and the one in force. */
export interface LimitState<T> {
  /** From the options of the workers that started last (null: none). */
  configured: T | null;
  /** Set by an operator (`null`: "no limit"; undefined: none set, the configured one holds). */
  override?: T | null;
  /** In force: the override when set, else the configured one (null: no limit). */
  effective: T | null;
}

/** A delay-queue type's fleet-wide limits as Redis holds them (see `QueueControlService.getLimits`). */
export interface TypeLimits {
  /** Its fleet-wide rate limit: configured, overridden, in force. */
  rateLimit: LimitState<Required<RateLimitOptions>>;
  /** Its fleet-wide concurrency (tasks running at once across the fleet): configured, overridden, in force. */
  globalConcurrency: LimitState<number>;
  /** Its live leases now: tasks running (or reserved to run) across the fleet. */
  running: number;
  /** Until when (epoch ms, Redis clock) nothing starts because a handler threw `RateLimitedError`; null: not paused so. */
  limitedUntil: number | null;
}

/** A group of a delay-queue type (see `SubmitOptions.group`): its counts and settings. */
export interface TaskGroup {
  /** The group's name. */
  group: string;
  /** Its waiting tasks, delayed and due. */
  waiting: number;
  /** Of those, the due ones waiting their turn (`getGroup` only). */
  due?: number;
  /** Its tasks holding a lease now (the slots its concurrency counts). */
  running: number;
  /** Whether the group is paused (`pauseGroup`): none of its tasks starts. */
  paused: boolean;
  /** Its own fleet-wide concurrency (`setGroupConcurrency`); absent: the type's `groupConcurrency`, if any. */
  concurrency?: number;
  /** Its weight in the rotation (`setGroupWeight`); absent: 1. */
  weight?: number;
  /** Its own rate limit (`setGroupRateLimit`); absent: the type's `groupRateLimit`, if any. */
  rateLimit?: Required<RateLimitOptions>;
}
