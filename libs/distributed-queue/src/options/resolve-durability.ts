import { InvalidOptionsError, InvalidSubmitOptionsError } from '../errors';
import { quote } from '../errors/quote';
import type { CallDurability, DurabilityOptions } from '../interfaces';
import { checkInt, checkKeys } from './checks';

/** How long a durable call waits for its replicas by default (`durability.timeoutMs`). */
export const DEFAULT_DURABILITY_TIMEOUT_MS = 1000;

/** Replicas a durable call waits for, and how long. */
export interface ResolvedDurability {
  replicas: number;
  timeoutMs: number;
}

const KEYS = ['replicas', 'timeoutMs'];

/**
 * The module option `durability` with its default, or null without it. `timeoutMs` must be shorter than
 * `redisTimeoutMs`: the `WAIT` is a Redis call, bounded by it like any other.
 */
export function resolveDurability(durability: DurabilityOptions | undefined, redisTimeoutMs: number): ResolvedDurability | null {
  if (durability === undefined) return null;
  checkKeys(durability, KEYS, 'durability');
  if (durability.replicas === undefined) throw new InvalidOptionsError('durability.replicas', 'is required: the replicas that must acknowledge each write (at least 1)');
  checkInt(durability.replicas, 'durability.replicas', 1, 1000);
  checkInt(durability.timeoutMs, 'durability.timeoutMs', 1, redisTimeoutMs - 1);
  return { replicas: durability.replicas, timeoutMs: durability.timeoutMs ?? DEFAULT_DURABILITY_TIMEOUT_MS };
}

/**
 * The durability of one call: its own option over the module's; null when the call is not durable.
 * @throws InvalidSubmitOptionsError for a bad option, or one given without the module option
 */
export function callDurability(call: CallDurability | undefined, module: ResolvedDurability | null, redisTimeoutMs: number): ResolvedDurability | null {
  if (call === undefined) return module;
  if (call === false) return null;
  if (call === null || typeof call !== 'object' || Array.isArray(call)) {
    throw new InvalidSubmitOptionsError('durability', `must be false or { replicas?, timeoutMs? }, got ${quote(call)}`);
  }
  for (const key of Object.keys(call)) {
    if (!KEYS.includes(key)) throw new InvalidSubmitOptionsError(`durability.${key}`, `unknown option (known: ${KEYS.join(', ')})`);
  }
  if (!module) {
    throw new InvalidSubmitOptionsError('durability', 'needs the module option "durability" ({ replicas, timeoutMs? }): set it to open the connection durable calls use');
  }
  const { replicas = module.replicas, timeoutMs = module.timeoutMs } = call;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 1 || replicas > 1000) {
    throw new InvalidSubmitOptionsError('durability.replicas', `must be an integer from 1 to 1000, got ${quote(replicas)}`);
  }
  if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs >= redisTimeoutMs) {
    throw new InvalidSubmitOptionsError('durability.timeoutMs', `must be an integer from 1 to ${redisTimeoutMs - 1} (below redisTimeoutMs), got ${quote(timeoutMs)}`);
  }
  return { replicas, timeoutMs };
}
