import { InvalidOptionsError } from '../errors';
import type { RateLimitOptions, TaskWorkerOptions } from '../interfaces';
import { MAX_TIMER_MS } from '../runtime/long-timer';
import { checkInt, checkKeys } from './checks';
import type { ResolvedWorkerOptions } from './resolve-options';

const RATE_KEYS = ['max', 'perMs', 'burst'];

/** The most tasks a rate limit may allow per window, and the most a fleet-wide concurrency may be. */
export const MAX_RATE = 1_000_000;
export const MAX_GLOBAL_CONCURRENCY = 1_000_000;

/** Validates `rateLimit` (at `${path}.rateLimit`); throws `InvalidOptionsError` naming the option. */
export function checkRateLimit(limit: unknown, path: string): asserts limit is RateLimitOptions {
  if (limit === null || typeof limit !== 'object' || Array.isArray(limit)) {
    throw new InvalidOptionsError(path, 'must be { max, perMs, burst? }');
  }
  checkKeys(limit, RATE_KEYS, path);
  const { max, perMs, burst } = limit as RateLimitOptions;
  if (max === undefined) throw new InvalidOptionsError(`${path}.max`, 'is required: the tasks started per perMs');
  if (perMs === undefined) throw new InvalidOptionsError(`${path}.perMs`, 'is required: the window in ms');
  checkInt(max, `${path}.max`, 1, MAX_RATE);
  checkInt(perMs, `${path}.perMs`, 1, MAX_TIMER_MS);
  checkInt(burst, `${path}.burst`, 0, max);
}

/** The least urgent priority; 0 is the most urgent (see `SubmitOptions.priority`). */
export const MAX_PRIORITY = 1000;

/** The longest aging step: turns (due + priority × agingMs) stay exact in Redis's doubles. */
export const MAX_AGING_MS = 2 ** 32;

/** Validates a worker's `rateLimit`, `globalConcurrency`, `defaultPriority` and `agingMs` (at `path`). */
export function validateLimits(options: TaskWorkerOptions, path: string): void {
  if (options.rateLimit !== undefined) checkRateLimit(options.rateLimit, `${path}.rateLimit`);
  checkInt(options.globalConcurrency, `${path}.globalConcurrency`, 1, MAX_GLOBAL_CONCURRENCY);
  checkInt(options.defaultPriority, `${path}.defaultPriority`, 0, MAX_PRIORITY);
  checkInt(options.agingMs, `${path}.agingMs`, 1, MAX_AGING_MS);
  checkInt(options.groupConcurrency, `${path}.groupConcurrency`, 1, MAX_GLOBAL_CONCURRENCY);
  if (options.groupRateLimit !== undefined) checkRateLimit(options.groupRateLimit, `${path}.groupRateLimit`);
}

/** The options of a delay-queue type its workers write into its limits hash (see `LimitsStore.configure`). */
export type ConfiguredLimits = Pick<ResolvedWorkerOptions, 'rateLimit' | 'globalConcurrency' | 'defaultPriority' | 'agingMs' | 'groupConcurrency' | 'groupRateLimit'>;

/** Whether a worker's options configure any of the type's limits or priorities. */
export function configuresLimits(o: ConfiguredLimits): boolean {
  return !!(o.rateLimit || o.globalConcurrency || o.defaultPriority || o.agingMs || o.groupConcurrency || o.groupRateLimit);
}

/** The first option of `o` that only delay-queue types take, or undefined. */
export function delayOnlyOption(o: ConfiguredLimits): string | undefined {
  return (['rateLimit', 'globalConcurrency', 'defaultPriority', 'agingMs', 'groupConcurrency', 'groupRateLimit'] as const).find((name) => o[name] !== undefined);
}

/**
 * A valid rate limit with its default burst (`floor(max / 50)`: a window holds at most 2 % more than `max`, and a
 * limit under 50 none more: `{ max: 1 }` is one start a window, as BullMQ's limiter of max 1).
 */
export function resolveRateLimit(limit: RateLimitOptions): Required<RateLimitOptions> {
  return { max: limit.max, perMs: limit.perMs, burst: limit.burst ?? Math.floor(limit.max / 50) };
}

/** How a rate limit is kept in Redis (see `includes/admission.lua`): `<max>:<perMs>:<burst>`. */
export function encodeRateLimit(limit: Required<RateLimitOptions>): string {
  return `${limit.max}:${limit.perMs}:${limit.burst}`;
}

/** A rate limit as Redis keeps it; null for none or an unreadable one. */
export function decodeRateLimit(text: string | null | undefined): Required<RateLimitOptions> | null {
  const m = text ? /^(\d+):(\d+):(\d+)$/.exec(text) : null;
  return m ? { max: Number(m[1]), perMs: Number(m[2]), burst: Number(m[3]) } : null;
}
