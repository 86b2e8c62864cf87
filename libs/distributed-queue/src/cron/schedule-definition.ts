import { CronExpressionParser } from 'cron-parser';
import { InvalidScheduleError } from '../errors';
import { quote } from '../errors/quote';
import type { MissedTicks, ScheduleOptions } from '../interfaces';
import { assertTaskType } from '../options/resolve-options';
import { isTaskContract, typeOf } from '../contracts/task-contract';
import { PLAIN_NAME, PLAIN_NAME_RULE } from '../options/checks';

/** The shortest `everyMs`. */
export const MIN_EVERY_MS = 1000;
const MAX_EVERY_MS = 366 * 24 * 3_600_000;

/** The option names of `ScheduleOptions`: any other is refused (a misspelt `timezone` would run in UTC). */
const SCHEDULE_KEYS = ['cron', 'everyMs', 'type', 'payload', 'timeZone', 'startAt', 'endAt', 'missedTicks'];

/** A schedule as stored in Redis (its JSON is compared to tell a change from the same definition again). */
export interface ScheduleDefinition {
  cron?: string;
  everyMs?: number;
  timeZone?: string;
  type: string;
  /** JSON text of the payload. */
  payload: string;
  startAt?: number;
  endAt?: number;
  missedTicks: MissedTicks;
}

function time(name: string, option: string, value: number | Date | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) throw new InvalidScheduleError(name, `${option} must be an epoch ms or a Date`);
  return Math.floor(ms);
}

/** Throws `InvalidScheduleError` unless `name` can name a schedule. */
export function checkScheduleName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !PLAIN_NAME.test(name)) {
    throw new InvalidScheduleError(String(name), `the name must be ${PLAIN_NAME_RULE}`);
  }
}

/**
 * Validates a schedule and gives its stored form.
 * @throws InvalidScheduleError naming the schedule: cron and everyMs both or neither, a bad expression, an
 * unknown time zone, everyMs below `MIN_EVERY_MS`, timeZone with everyMs, endAt before startAt, a bad type,
 * a payload that is not JSON or too large, an unknown option name; values are quoted by a prefix
 */
export function toDefinition(name: string, options: ScheduleOptions, maxPayloadBytes: number): ScheduleDefinition {
  checkScheduleName(name);
  if (options === null || typeof options !== 'object') throw new InvalidScheduleError(name, 'expected { cron | everyMs, type, ... }');
  for (const key of Object.keys(options)) {
    if (!SCHEDULE_KEYS.includes(key)) throw new InvalidScheduleError(name, `unknown option ${quote(key)} (known: ${SCHEDULE_KEYS.join(', ')})`);
  }
  const { cron, everyMs, timeZone, missedTicks = 'runOnce' } = options;
  if ((cron === undefined) === (everyMs === undefined)) throw new InvalidScheduleError(name, 'give either cron or everyMs');
  if (cron !== undefined) {
    if (typeof cron !== 'string') throw new InvalidScheduleError(name, 'cron must be a string');
    if (timeZone !== undefined && !isTimeZone(timeZone)) throw new InvalidScheduleError(name, `unknown time zone ${quote(timeZone)}`);
    checkCron(name, cron, timeZone ?? 'UTC');
  } else {
    if (timeZone !== undefined) throw new InvalidScheduleError(name, 'timeZone applies to cron only, not to everyMs');
    if (!Number.isInteger(everyMs) || everyMs! < MIN_EVERY_MS || everyMs! > MAX_EVERY_MS) {
      throw new InvalidScheduleError(name, `everyMs must be an integer from ${MIN_EVERY_MS} to ${MAX_EVERY_MS}, got ${quote(everyMs)}`);
    }
  }
  if (missedTicks !== 'runOnce' && missedTicks !== 'skip') throw new InvalidScheduleError(name, `missedTicks must be 'runOnce' or 'skip', got ${quote(missedTicks)}`);
  // NOTE: a contract stands for its type string; an ordered one is refused as an ordered type is (see TaskScheduleService)
  if (isTaskContract(options.type) && options.type.ordered) throw new InvalidScheduleError(name, `type ${quote(options.type.type)} is ordered: a schedule submits delay tasks`);
  const type = typeOf(options.type);
  try {
    assertTaskType(type);
  } catch (error) {
    throw new InvalidScheduleError(name, (error as Error).message);
  }
  const startAt = time(name, 'startAt', options.startAt);
  const endAt = time(name, 'endAt', options.endAt);
  if (startAt !== undefined && endAt !== undefined && endAt <= startAt) throw new InvalidScheduleError(name, 'endAt must be after startAt');
  let payload: string | undefined;
  try {
    payload = JSON.stringify(options.payload ?? null);
  } catch (error) {
    throw new InvalidScheduleError(name, `the payload is not JSON: ${(error as Error).message}`);
  }
  if (payload === undefined) throw new InvalidScheduleError(name, 'the payload is not JSON');
  if (Buffer.byteLength(payload) > maxPayloadBytes) throw new InvalidScheduleError(name, `the payload is larger than ${maxPayloadBytes} bytes`);
  // NOTE: fields in a fixed order, undefined ones left out: the same schedule gives the same JSON everywhere.
  return JSON.parse(JSON.stringify({ cron, everyMs, timeZone: cron === undefined ? undefined : timeZone ?? 'UTC', type, payload, startAt, endAt, missedTicks }));
}

/** Fields of a cron expression: 5, or 6 with seconds first (cron-parser alone takes 0 to 6, and aliases). */
const CRON_FIELDS = /^\s*\S+(\s+\S+){4,5}\s*$/;

function checkCron(name: string, cron: string, timeZone: string): void {
  const bad = (why: string) => new InvalidScheduleError(name, `bad cron expression ${quote(cron)}: ${why}`);
  if (!CRON_FIELDS.test(cron)) throw bad('expected 5 fields, or 6 with seconds first');
  try {
    CronExpressionParser.parse(cron, { tz: timeZone }).next();
  } catch (error) {
    throw bad((error as Error).message);
  }
}

function isTimeZone(zone: unknown): boolean {
  if (typeof zone !== 'string' || zone.length === 0) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The first tick strictly after `afterMs` (epoch ms), or null when the schedule has none left. */
export function nextTick(def: ScheduleDefinition, afterMs: number): number | null {
  const after = Math.max(afterMs, (def.startAt ?? 0) - 1);
  let next: number;
  if (def.everyMs !== undefined) {
    const anchor = def.startAt ?? 0;
    next = anchor + (Math.floor((after - anchor) / def.everyMs) + 1) * def.everyMs;
  } else {
    const expression = CronExpressionParser.parse(def.cron!, { currentDate: new Date(after), tz: def.timeZone ?? 'UTC' });
    next = expression.next().getTime();
    // NOTE: strictly after, whatever the library does with a current date that is itself a tick.
    while (next <= after) next = expression.next().getTime();
  }
  return def.endAt !== undefined && next > def.endAt ? null : next;
}

/**
 * The last tick at or before `atMs` (epoch ms), not before `notBefore` (a tick of the schedule) nor after
 * `endAt`: the run of a catch-up after every instance was down.
 */
export function lastTickBy(def: ScheduleDefinition, atMs: number, notBefore: number): number {
  const at = def.endAt !== undefined ? Math.min(atMs, def.endAt) : atMs;
  let last: number;
  if (def.everyMs !== undefined) {
    const anchor = def.startAt ?? 0;
    last = anchor + Math.floor((at - anchor) / def.everyMs) * def.everyMs;
  } else {
    const expression = CronExpressionParser.parse(def.cron!, { currentDate: new Date(at + 1), tz: def.timeZone ?? 'UTC' });
    last = expression.prev().getTime();
    // NOTE: at or before, whatever the library does at a current date that is itself a tick.
    while (last > at) last = expression.prev().getTime();
  }
  return Math.max(last, notBefore);
}
