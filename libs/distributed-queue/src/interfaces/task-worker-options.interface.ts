/** Retry backoff. Delay of retry n (n = 1, 2, ...): fixed `delayMs`, or `delayMs * 2^(n-1)` capped at `maxDelayMs`. */
export interface BackoffOptions {
  /** @default 'exponential' */
  type?: 'fixed' | 'exponential';
  /** @default 1000 */
  delayMs?: number;
  /** Upper bound of an exponential delay. @default 3600000 (1 hour) */
  maxDelayMs?: number;
  /** Share of the delay that is random: 0.2 means the delay is drawn from [0.8 d, d]. @default 0.2 */
  jitter?: number;
}

/**
 * A fleet-wide rate limit of a delay-queue type: every worker of every instance together starts at most `max`
 * tasks in any window of `perMs` ms, plus `burst` (GCRA on Redis's clock, in the reserve script).
 */
export interface RateLimitOptions {
  /** Tasks started per `perMs` (1 to 1,000,000). */
  max: number;
  /** The window, ms (1 to 2^31-1). */
  perMs: number;
  /**
   * Starts allowed beyond `max` in a window (0 to `max`): what a worker may take at once after an idle
   * moment. 0 spaces every start by `perMs / max` exactly. @default floor(max / 50)
   */
  burst?: number;
}

/** How tasks of one type are run. Set per worker, per type (`types`) or for all (`defaults`). */
export interface TaskWorkerOptions {
  /**
   * Ordered type: tasks are submitted with `submitOrdered(type, key, ...)` and run through the route queue,
   * one after another per key. `visibilityTimeoutMs` and `pollIntervalMs` do not apply.
   * @default false
   */
  ordered?: boolean;
  /**
   * Handlers of this type running at once in one application instance (for an ordered type: over all the
   * partitions this instance owns). A delay-queue worker whose handlers are quick also reserves tasks ahead
   * of free slots, so that one reserved ahead waits about 2 ms for its slot: up to three times
   * `concurrency`, fewer as handlers slow down. Fewer, larger round trips to Redis. When no slot frees
   * for 100 ms, those are handed back for other workers. @default 1 (ordered types: 32)
   */
  concurrency?: number;
  /** A run longer than this fails with `TaskTimeoutError` (its signal aborts). @default 60000 */
  timeoutMs?: number;
  /** Runs in all, first included; then the task goes to dead letters. @default 3 (2 retries) */
  maxAttempts?: number;
  /** Delay between attempts. */
  backoff?: BackoffOptions;
  /**
   * Lease of a reserved task. The worker renews it every third of this while the handler runs; when a
   * worker dies, its tasks become ready again after at most this long. @default 30000
   */
  visibilityTimeoutMs?: number;
  /** Safety poll: the worker looks for due tasks at least this often, whatever else happens. @default 1000 */
  pollIntervalMs?: number;
  /**
   * Delay-queue types: a rate limit for the whole fleet (see `RateLimitOptions`). An operator's
   * `QueueControlService.setRateLimit` overrides it until `resetLimits`. @default none
   */
  rateLimit?: RateLimitOptions;
  /**
   * Delay-queue types: at most this many tasks of the type run at once across every instance (counted from
   * the live leases in Redis: a killed worker's slots come back when its leases expire). An operator's
   * `QueueControlService.setGlobalConcurrency` overrides it until `resetLimits`. @default none
   */
  globalConcurrency?: number;
  /**
   * Delay-queue types: the priority of tasks submitted without one (0, the most urgent, to 1000), for every
   * producer of the type once a worker with this option has started (kept in Redis). @default 0
   */
  defaultPriority?: number;
  /**
   * Delay-queue types: aging of priorities. A due task's turn is its due time plus priority × agingMs, so a
   * task that has waited agingMs longer than another is served as if one level more urgent, and so on: a
   * flood of urgent work cannot starve the rest forever. Without it, a more urgent task always goes first.
   * Applies to tasks as they fall due. @default none
   */
  agingMs?: number;
  /**
   * Delay-queue types: at most this many tasks of each group (see `SubmitOptions.group`) hold a lease at once
   * across every instance; `1` runs a group's tasks one at a time. `TaskGroupsService.setGroupConcurrency`
   * overrides it per group. @default none
   */
  groupConcurrency?: number;
  /**
   * Delay-queue types: a rate limit per group (see `RateLimitOptions`): each group of the type starts at most
   * `max` tasks per `perMs`, across the fleet. `TaskGroupsService.setGroupRateLimit` overrides it per group.
   * @default none
   */
  groupRateLimit?: RateLimitOptions;
}
