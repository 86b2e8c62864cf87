import { delayQueueKeys } from '../redis/queue-keys';
import type { DecodedEntry } from './history-decode';
import type { HistoryEvent } from './history-event';

/**
 * The events whose row takes its task's log lines: an attempt's end (the attempt's last lines reach Redis
 * before its ack or failure, on the same connection: see delay/task-reports.ts).
 */
const LOGGED_EVENTS = new Set<HistoryEvent['event']>(['completed', 'retrying', 'dead']);

/** Task ids per HMGET at most: a reply holds at most this many logs (64 KiB each by default). */
export const LOGS_READ_CHUNK = 100;

/** The HASH of a delay type's task log lines: id -> text (see scripts/includes/task-logs.lua). */
export const taskLogsKey = (prefix: string, type: string): string => `${delayQueueKeys(prefix, type).jobs}:lg`;

/** What reading the log lines needs of a Redis client. */
export interface LogsReader {
  hmget(key: string, ...ids: string[]): Promise<(string | null)[]>;
}

/** The tasks of the batch's attempt ends (see LOGGED_EVENTS), each once, in the order first seen. */
export function loggedTaskIds(entries: readonly DecodedEntry[]): string[] {
  const ids = new Set<string>();
  for (const entry of entries) for (const e of entry.events) if (LOGGED_EVENTS.has(e.event)) ids.add(e.id);
  return [...ids];
}

/**
 * Gives the batch's attempt ends their tasks' log lines (`logs`, raw), read from the type's HASH `key` as it
 * is now: one HMGET per `chunk` ids, none when the batch ends no attempt. Every event of a task gets the same
 * text (the latest: a retry's row shows the lines so far). A task without lines (none logged, or its record
 * and its lines already gone) gets none, and its row keeps what it had. Only for a delay type's stream: a
 * route partition's ordered tasks keep no logs. A failed read rejects (the writer's pass fails and is retried:
 * nothing of the batch was applied).
 * @returns the HMGET calls made
 */
export async function attachTaskLogs(redis: LogsReader, key: string, entries: readonly DecodedEntry[], chunk = LOGS_READ_CHUNK): Promise<number> {
  const ids = loggedTaskIds(entries);
  if (ids.length === 0) return 0;
  const logs = new Map<string, string>();
  let calls = 0;
  for (let i = 0; i < ids.length; i += chunk) {
    const part = ids.slice(i, i + chunk);
    const values = await redis.hmget(key, ...part);
    calls++;
    part.forEach((id, j) => {
      const text = values[j];
      if (typeof text === 'string' && text !== '') logs.set(id, text);
    });
  }
  if (logs.size === 0) return calls;
  for (const entry of entries) {
    for (const e of entry.events) {
      const text = LOGGED_EVENTS.has(e.event) ? logs.get(e.id) : undefined;
      if (text !== undefined) e.logs = text;
    }
  }
  return calls;
}
