import { InvalidArgumentError } from '../errors';
import { quote } from '../errors/quote';
import { MAX_GLOBAL_CONCURRENCY } from '../options/resolve-limits';
import { MAX_GROUP_WEIGHT } from '../services/task-groups.service';
import { countOfRequest } from './request-body';

/** Groups per page of the dashboard's list unless the request says otherwise. */
export const GROUP_PAGE = 50;

/** A query parameter as a whole number (digits only: no sign, fraction, exponent or repeat); absent or '': `fallback`. */
export function wholeParam(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : NaN;
  if (Number.isNaN(n)) throw new InvalidArgumentError(name, `must be a whole number, got ${quote(value)}`);
  return n;
}

/**
 * The page of a request for a type's groups, `?offset=&limit=` (defaults 0 and 50); the groups service
 * checks the ranges (offset from 0, limit from 1 to 1000).
 * @throws InvalidArgumentError naming `offset` or `limit`
 */
export function groupPageOfRequest(query: Record<string, unknown>): { offset: number; limit: number } {
  return { offset: wholeParam(query.offset, 'offset', 0), limit: wholeParam(query.limit, 'limit', GROUP_PAGE) };
}

/** A group's own fleet-wide concurrency, `{ "concurrency": n }` (from 1) or `{ "concurrency": null }` (the type's). */
export function groupConcurrencyOfRequest(body: unknown): number | null {
  return countOfRequest(body, 'concurrency', MAX_GLOBAL_CONCURRENCY);
}

/** A group's weight in the rotation, `{ "weight": n }` (1 to 1000) or `{ "weight": null }` (1). */
export function groupWeightOfRequest(body: unknown): number | null {
  return countOfRequest(body, 'weight', MAX_GROUP_WEIGHT);
}
