import { InvalidOptionsError } from '../errors';
import { quote } from '../errors/quote';
import { didYouMean } from './suggest';

/** Throws unless `value` is undefined or an object with only `allowed` keys. */
export function checkKeys(value: unknown, allowed: string[], path: string): void {
  if (value === undefined) return;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidOptionsError(path || 'options', 'must be an object');
  }
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw new InvalidOptionsError(path ? `${path}.${key}` : key, `unknown option${didYouMean(key, allowed)} (known: ${allowed.join(', ')})`);
    }
  }
}

/** Throws unless `value` is undefined or an integer in [min, max]. */
export function checkInt(value: unknown, path: string, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidOptionsError(path, `must be an integer from ${min} to ${max}, got ${quote(value)}`);
  }
}

/** Throws unless `value` is undefined or a boolean. */
export function checkBool(value: unknown, path: string): void {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new InvalidOptionsError(path, `must be true or false, got ${quote(value)}`);
  }
}

/** Names of applications, instances and schedules: they go into key names and ids, so a plain set. */
export const PLAIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
/** What `PLAIN_NAME` allows, for error messages. */
export const PLAIN_NAME_RULE = '1 to 128 letters, digits, ".", "_", ":" or "-", starting with a letter or digit';
