import { delayQueueKeys } from '../redis/queue-keys';
import type { HistoryEvent } from './history-event';

/**
 * The events whose row takes its task's log lines: an attempt's end (the attempt's last lines reach Redis
 * before its ack or failure, on the same connection: see delay/task-reports.ts).
 */
export const LOGGED_EVENTS: ReadonlySet<string> = new Set<HistoryEvent['event']>(['completed', 'retrying', 'dead']);

/** Task ids per HMGET at most: a reply holds at most this many logs (64 KiB each by default). */
export const LOGS_READ_CHUNK = 100;

/** The HASH of a delay type's task log lines: id -> text (see scripts/includes/task-logs.lua). */
export const taskLogsKey = (prefix: string, type: string): string => `${delayQueueKeys(prefix, type).jobs}:lg`;

/** What reading the log lines needs of a Redis client. */
export interface LogsReader {
  hlen(key: string): Promise<number>;
  hmget(key: string, ...ids: string[]): Promise<(string | null)[]>;
}

/**
 * The log lines of a batch's attempt ends (see loggedTaskIds and readTaskLogs): nothing read but the HASH's
 * length when no task of the type keeps lines (the usual case: a task's lines reach Redis before its ack,
 * so an attempt end read from the stream finds its lines there, unless they are gone with the task).
 */
export async function readBatchLogs(redis: LogsReader, key: string, entries: Iterable<{ event: string; ids: readonly unknown[] }>): Promise<Map<string, string>> {
  if ((await redis.hlen(key)) === 0) return new Map();
  return readTaskLogs(redis, key, loggedTaskIds(entries));
}

/** The tasks of a batch's attempt ends (see LOGGED_EVENTS), each once, in the order first seen. */
export function loggedTaskIds(entries: Iterable<{ event: string; ids: readonly unknown[] }>): string[] {
  const ids = new Set<string>();
  for (const entry of entries) if (LOGGED_EVENTS.has(entry.event)) for (const id of entry.ids) ids.add(String(id));
  return [...ids];
}

/**
 * The log lines (raw) of the tasks `ids` (called when the HASH holds any), read from the type's HASH `key`
 * as it is now: one HMGET per `chunk` ids, none when there are no ids. A task without lines (none logged, or its record and its lines
 * already gone) is left out, and its row keeps what it had. Only for a delay type's stream: a route
 * partition's ordered tasks keep no logs. A failed read rejects (the writer's pass fails and is retried:
 * nothing of the batch was applied).
 */
export async function readTaskLogs(redis: LogsReader, key: string, ids: readonly string[], chunk = LOGS_READ_CHUNK): Promise<Map<string, string>> {
  const logs = new Map<string, string>();
  for (let i = 0; i < ids.length; i += chunk) {
    const part = ids.slice(i, i + chunk);
    const values = await redis.hmget(key, ...part);
    part.forEach((id, j) => {
      const text = values[j];
      if (typeof text === 'string' && text !== '') logs.set(id, text);
    });
  }
  return logs;
}

/**
 * Gives the attempt ends among `events` their tasks' log lines from `logs` (every event of a task gets the
 * same text, the latest: a retry's row shows the lines so far).
 */
export function attachTaskLogs(events: Iterable<HistoryEvent>, logs: ReadonlyMap<string, string>): void {
  if (logs.size === 0) return;
  for (const e of events) {
    const text = LOGGED_EVENTS.has(e.event) ? logs.get(e.id) : undefined;
    if (text !== undefined) e.logs = text;
  }
}
