import { InvalidArgumentError } from '../errors';
import { quote } from '../errors/quote';
import { checkInt } from '../options/checks';
import { asArgument } from '../services/queue-control.service';

/**
 * The one field a JSON request body must hold, and nothing else (`null` is a value; a missing field is not).
 * @throws InvalidArgumentError naming the body or the field
 */
export function fieldOf(body: unknown, name: string, shape: string): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new InvalidArgumentError('body', `must be ${shape}, got ${quote(body)}`);
  const unknown = Object.keys(body).find((key) => key !== name);
  if (unknown !== undefined) throw new InvalidArgumentError('body', `unknown field ${quote(unknown)}: send ${shape}`);
  const value = (body as Record<string, unknown>)[name];
  if (value === undefined) throw new InvalidArgumentError(name, `is required: send ${shape}`);
  return value;
}

/**
 * A count of a request body, `{ "<name>": n }` (an integer from 1 to `max`) or `{ "<name>": null }` (none),
 * checked without coercion (strings, fractions, out-of-range numbers are refused).
 * @throws InvalidArgumentError naming the body or the field
 */
export function countOfRequest(body: unknown, name: string, max: number): number | null {
  const value = fieldOf(body, name, `{ "${name}": n } or { "${name}": null } (none)`);
  if (value !== null) asArgument(() => checkInt(value, name, 1, max));
  return value as number | null;
}
