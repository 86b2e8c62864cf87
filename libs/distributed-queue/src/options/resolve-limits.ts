import { InvalidOptionsError } from '../errors';
import type { RateLimitOptions, TaskWorkerOptions } from '../interfaces';
import { MAX_TIMER_MS } from '../runtime/long-timer';
import { checkInt, checkKeys } from './checks';

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

/** Validates a worker's `rateLimit` and `globalConcurrency` (at `path`). */
export function validateLimits(options: TaskWorkerOptions, path: string): void {
  if (options.rateLimit !== undefined) checkRateLimit(options.rateLimit, `${path}.rateLimit`);
  checkInt(options.globalConcurrency, `${path}.globalConcurrency`, 1, MAX_GLOBAL_CONCURRENCY);
}

/** A valid rate limit with its default burst (`ceil(max / 50)`: a window holds at most 2 % more than `max`). */
export function resolveRateLimit(limit: RateLimitOptions): Required<RateLimitOptions> {
  return { max: limit.max, perMs: limit.perMs, burst: limit.burst ?? Math.ceil(limit.max / 50) };
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
