import { InvalidArgumentError } from '../errors';
import { quote } from '../errors/quote';
import type { RateLimitOptions } from '../interfaces';
import { checkInt } from '../options/checks';
import { checkRateLimit, MAX_GLOBAL_CONCURRENCY } from '../options/resolve-limits';
import { asArgument } from '../services/queue-control.service';

const RATE_SHAPE = '{ "rateLimit": { "max": n, "perMs": ms, "burst"?: n } } or { "rateLimit": null } (no limit)';
const CONCURRENCY_SHAPE = '{ "globalConcurrency": n } or { "globalConcurrency": null } (none)';

/**
 * The one field a JSON request body must hold, and nothing else (`null` is a value; a missing field is not).
 * @throws InvalidArgumentError naming the body or the field
 */
function fieldOf(body: unknown, name: string, shape: string): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new InvalidArgumentError('body', `must be ${shape}, got ${quote(body)}`);
  const unknown = Object.keys(body).find((key) => key !== name);
  if (unknown !== undefined) throw new InvalidArgumentError('body', `unknown field ${quote(unknown)}: send ${shape}`);
  const value = (body as Record<string, unknown>)[name];
  if (value === undefined) throw new InvalidArgumentError(name, `is required: send ${shape}`);
  return value;
}

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
  const value = fieldOf(body, 'globalConcurrency', CONCURRENCY_SHAPE);
  if (value !== null) asArgument(() => checkInt(value, 'globalConcurrency', 1, MAX_GLOBAL_CONCURRENCY));
  return value as number | null;
}
