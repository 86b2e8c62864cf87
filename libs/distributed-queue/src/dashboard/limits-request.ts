import type { RateLimitOptions } from '../interfaces';
import { checkRateLimit, MAX_GLOBAL_CONCURRENCY } from '../options/resolve-limits';
import { asArgument } from '../services/queue-control.service';
import { countOfRequest, fieldOf } from './request-body';

const RATE_SHAPE = '{ "rateLimit": { "max": n, "perMs": ms, "burst"?: n } } or { "rateLimit": null } (no limit)';

/**
 * The rate limit of a dashboard request, `{ "rateLimit": { max, perMs, burst? } }` or `{ "rateLimit": null }`,
 * checked as the `rateLimit` option is (no coercion: strings, fractions, out-of-range numbers are refused).
 * @throws InvalidArgumentError naming the field (e.g. `rateLimit.perMs`)
 */
export function rateLimitOfRequest(body: unknown): RateLimitOptions | null {
  const value = fieldOf(body, 'rateLimit', RATE_SHAPE);
  if (value !== null) asArgument(() => checkRateLimit(value, 'rateLimit'));
  return value as RateLimitOptions | null;
}

/**
 * The fleet-wide concurrency of a dashboard request, `{ "globalConcurrency": n }` (an integer from 1) or
 * `{ "globalConcurrency": null }`.
 * @throws InvalidArgumentError naming the field
 */
export function concurrencyOfRequest(body: unknown): number | null {
  return countOfRequest(body, 'globalConcurrency', MAX_GLOBAL_CONCURRENCY);
}
