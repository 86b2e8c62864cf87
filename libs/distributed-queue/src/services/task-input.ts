import { InvalidArgumentError, InvalidSubmitOptionsError } from '../errors';
import { quote } from '../errors/quote';
import type { SubmitOptions } from '../interfaces';
import { checkedTypeOf, type TaskContract } from '../contracts/task-contract';
import { MAX_DELAY_MS } from '../options/resolve-options';
import { MAX_PRIORITY } from '../options/resolve-limits';
import type { Due, TaskDedupe } from '../delay/delay-queue.store';
import { DOT_SEGMENT_RULE, isDotSegment, isStorable, STORABLE_RULE } from '../runtime/storable-text';

/**
 * A name the library keys data by: a string of 1 to `max` characters that Redis stores as it is; `inUrl`: one
 * the dashboard puts in a URL's path (not `.` or `..`).
 */
function isName(value: unknown, max: number, inUrl: boolean): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= max && isStorable(value) && !(inUrl && isDotSegment(value));
}

/** Checks a task's priority: an integer from 0 (the most urgent) to `MAX_PRIORITY`. */
export function checkPriority(priority: unknown, name = 'priority'): number {
  if (typeof priority !== 'number' || !Number.isInteger(priority) || priority < 0 || priority > MAX_PRIORITY) {
    throw new InvalidSubmitOptionsError(name, `must be an integer from 0 (the most urgent) to ${MAX_PRIORITY}, got ${quote(priority)}`);
  }
  return priority;
}

/** Checks a task's group: a string of 1 to 256 characters. `InvalidSubmitOptionsError` (or, with `name`, `InvalidArgumentError`). */
export function checkGroup(group: unknown, name?: string): string {
  if (!isName(group, 256, true)) {
    const why = `must be a non-empty string of at most 256 characters ${STORABLE_RULE}, ${DOT_SEGMENT_RULE}, got ${quote(group)}`;
    throw name ? new InvalidArgumentError(name, why) : new InvalidSubmitOptionsError('group', why);
  }
  return group;
}

const DEDUPE_MODES = ['drop', 'extend', 'replace', 'debounce'] as const;

/**
 * A submit's `dedupe` option, checked; undefined when it has none.
 * @throws InvalidSubmitOptionsError naming the option (`dedupe`, `dedupe.key`, `dedupe.ttlMs`, `dedupe.mode`)
 */
export function checkDedupe(value: unknown): TaskDedupe | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InvalidSubmitOptionsError('dedupe', `must be { key, ttlMs?, mode? }, got ${quote(value)}`);
  const { key, ttlMs = 0, mode = 'drop', ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new InvalidSubmitOptionsError(`dedupe.${unknown[0]}`, 'unknown option (known: key, ttlMs, mode)');
  if (!isName(key, 256, false)) throw new InvalidSubmitOptionsError('dedupe.key', `must be a non-empty string of at most 256 characters ${STORABLE_RULE}, got ${quote(key)}`);
  if (typeof ttlMs !== 'number' || !Number.isInteger(ttlMs) || ttlMs < 0 || ttlMs > MAX_DELAY_MS) {
    throw new InvalidSubmitOptionsError('dedupe.ttlMs', `must be a whole number of ms from 0 to ${MAX_DELAY_MS}, got ${quote(ttlMs)}`);
  }
  if (!DEDUPE_MODES.includes(mode as TaskDedupe['mode'])) throw new InvalidSubmitOptionsError('dedupe.mode', `must be one of ${DEDUPE_MODES.join(', ')}, got ${quote(mode)}`);
  if (mode === 'extend' && ttlMs === 0) throw new InvalidSubmitOptionsError('dedupe.ttlMs', "mode 'extend' restarts a window: give a ttlMs");
  return { key, ttlMs, mode: mode as TaskDedupe['mode'] };
}

/** The latest `runAt` accepted: the end of JavaScript's Date range. */
const MAX_RUN_AT = 8.64e15;

/** Checks a task id. `fresh`: an id for a new task, where `#...` is kept for generated ids and `&...` for flow nodes. */
export function checkId(id: unknown, fresh = false): string {
  if (!isName(id, 256, true)) {
    throw new InvalidSubmitOptionsError('id', `must be a non-empty string of at most 256 characters ${STORABLE_RULE}, ${DOT_SEGMENT_RULE}, got ${quote(id)}`);
  }
  if (fresh && id.startsWith('#')) throw new InvalidSubmitOptionsError('id', `ids starting with "#" are generated ones, got ${quote(id)}`);
  if (fresh && id.startsWith('&')) throw new InvalidSubmitOptionsError('id', `ids starting with "&" are flow nodes' (see submitFlow), got ${quote(id)}`);
  return id;
}

/** Checks a list of task ids (`InvalidArgumentError` naming `name` when it is not an array; each id as `checkId`). */
export function checkIds(ids: unknown, name = 'ids'): string[] {
  if (!Array.isArray(ids)) throw new InvalidArgumentError(name, `must be an array of task ids, got ${quote(ids)}`);
  return ids.map((id) => checkId(id));
}

/** Checks that a list (of task types, of ids) is an array: `InvalidArgumentError` naming `name`. */
function checkArray<T>(list: readonly T[], name: string): readonly T[] {
  if (!Array.isArray(list)) throw new InvalidArgumentError(name, `must be an array, got ${quote(list)}`);
  return list;
}

/** The names of a list of task types (strings or contracts). @throws InvalidArgumentError, InvalidTaskTypeError */
export function checkTypeNames(types: readonly (string | TaskContract<unknown, boolean>)[]): string[] {
  return checkArray(types, 'types').map(checkedTypeOf);
}

/** Checks an activity window: a positive integer of ms. @throws InvalidArgumentError */
export function checkWindowMs(windowMs: unknown): number {
  if (!Number.isInteger(windowMs) || (windowMs as number) < 1) throw new InvalidArgumentError('windowMs', `must be a positive integer, got ${String(windowMs)}`);
  return windowMs as number;
}

/** Checks a page's limit: an integer from 1 to 1000. @throws InvalidArgumentError */
export function checkLimit(limit: unknown): void {
  if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > 1000) throw new InvalidArgumentError('limit', `must be an integer from 1 to 1000, got ${String(limit)}`);
}

/** Checks a page's offset: an integer from 0. @throws InvalidArgumentError */
export function checkOffset(offset: unknown): void {
  if (!Number.isInteger(offset) || (offset as number) < 0) throw new InvalidArgumentError('offset', `must be an integer from 0, got ${String(offset)}`);
}

/** Checks an ordering key. */
export function checkKey(key: unknown, index: number): string {
  if (!isName(key, 1024, false)) {
    throw new InvalidSubmitOptionsError('key', `items[${index}]: must be a non-empty string of at most 1024 characters ${STORABLE_RULE}, got ${quote(key)}`);
  }
  return key;
}

/** Refuses options other than `known` (a typo must not pass silently). */
export function checkOptionNames(item: object, known: string[], index: number): void {
  if (item === null || typeof item !== 'object') {
    throw new InvalidSubmitOptionsError(`items[${index}]`, 'must be an object with a payload');
  }
  for (const name of Object.keys(item)) {
    if (!known.includes(name)) throw new InvalidSubmitOptionsError(name, `unknown option (known: ${known.join(', ')})`);
  }
}

/** When a task is due, from `delay` (ms from now, Redis clock) or `runAt` (a Date or epoch ms). */
export function toDue(when: Pick<SubmitOptions, 'delay' | 'runAt'>): Due {
  if (when === null || typeof when !== 'object') throw new InvalidSubmitOptionsError('when', `must be { delay } or { runAt }, got ${quote(when)}`);
  const { delay, runAt } = when;
  if (delay !== undefined && runAt !== undefined) {
    throw new InvalidSubmitOptionsError('delay', 'give either delay or runAt, not both');
  }
  if (runAt !== undefined) {
    const at = runAt instanceof Date ? runAt.getTime() : runAt;
    if (typeof at !== 'number' || !Number.isFinite(at) || at < 0 || at > MAX_RUN_AT) {
      throw new InvalidSubmitOptionsError('runAt', `must be a valid Date or epoch milliseconds, got ${quote(String(runAt))}`);
    }
    return { at };
  }
  const ms = delay === undefined ? 0 : delay;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > MAX_DELAY_MS) {
    throw new InvalidSubmitOptionsError('delay', `must be a non-negative number of milliseconds, at most ${MAX_DELAY_MS} (100 years), got ${quote(delay)}`);
  }
  return { delay: ms };
}

/**
 * A submit's deadline (`expireAt` or `ttlMs`), checked against its due time where both are of one kind;
 * undefined when it has none.
 * @throws InvalidSubmitOptionsError naming the option
 */
export function toDeadline({ expireAt, ttlMs }: Pick<SubmitOptions, 'expireAt' | 'ttlMs'>, due: Due): Due | undefined {
  if (expireAt !== undefined && ttlMs !== undefined) throw new InvalidSubmitOptionsError('ttlMs', 'give either expireAt or ttlMs, not both');
  if (expireAt !== undefined) {
    const at = expireAt instanceof Date ? expireAt.getTime() : expireAt;
    if (typeof at !== 'number' || !Number.isFinite(at) || at < 0 || at > MAX_RUN_AT) {
      throw new InvalidSubmitOptionsError('expireAt', `must be a valid Date or epoch milliseconds, got ${quote(String(expireAt))}`);
    }
    if ('at' in due && due.at >= at) throw new InvalidSubmitOptionsError('expireAt', 'must come after runAt');
    return { at };
  }
  if (ttlMs === undefined) return undefined;
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs) || ttlMs < 1 || ttlMs > MAX_DELAY_MS) {
    throw new InvalidSubmitOptionsError('ttlMs', `must be a positive number of milliseconds, at most ${MAX_DELAY_MS} (100 years), got ${quote(ttlMs)}`);
  }
  if ('delay' in due && due.delay >= ttlMs) throw new InvalidSubmitOptionsError('ttlMs', 'must exceed delay');
  return { delay: ttlMs };
}

/**
 * The due time of a reschedule request as JSON sends it, `{ "delayMs": ms }` or `{ "runAt": epoch ms }`
 * (the dashboard's API): exactly one of them, checked by `toDue` as a submit's `delay` / `runAt` are.
 * @throws InvalidSubmitOptionsError for anything else (no coercion: null, '', [], true, '1000' are refused)
 */
export function dueOfRequest(body: unknown): Due {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidSubmitOptionsError('body', `must be { "delayMs": ms } or { "runAt": epoch ms }, got ${quote(body)}`);
  }
  checkOptionNames(body, ['delayMs', 'runAt'], 0);
  const { delayMs, runAt } = body as { delayMs?: unknown; runAt?: unknown };
  if (!('delayMs' in body) && !('runAt' in body)) throw new InvalidSubmitOptionsError('delayMs', 'give delayMs or runAt');
  if ('delayMs' in body && delayMs === undefined) throw new InvalidSubmitOptionsError('delayMs', 'must be a number of milliseconds');
  return toDue({ delay: 'delayMs' in body ? (delayMs as number) : undefined, runAt: 'runAt' in body ? (runAt as number) : undefined });
}
