import { routeDelayType } from '../distributed-queue.constants';
import { decodeStreamEntry, type StreamEntry } from '../events/stream-entry';
import type { HistoryEvent } from './history-event';

/** The prefix of the internal delay types that hold delayed ordered tasks until they are due. */
const ROUTE_DELAY_PREFIX = routeDelayType('');

/** True for the stream of a route queue's delay queue (delayed ordered tasks wait there). */
export const isOrderedDelayStream = (from: { type?: string }): boolean => from.type?.startsWith(ROUTE_DELAY_PREFIX) ?? false;

/**
 * The submit of a delayed ordered task, as the route queue's delay queue logged it (its payload is
 * `{ key, item }`, `item` the ordered task as its partition will hold it), as the ordered task's own
 * `submitted`: its type, id, key and payload, with the delay's due time and delay. Undefined when unreadable.
 */
function orderedSubmit(e: HistoryEvent): HistoryEvent | undefined {
  if (e.body === undefined) return undefined;
  try {
    const { key, item } = JSON.parse(e.body) as { key?: unknown; item?: unknown };
    const task = JSON.parse(String(item)) as { id?: unknown; type?: unknown; key?: unknown; payload?: unknown };
    if (typeof task?.type !== 'string' || !task.type) return undefined;
    const out: HistoryEvent = { event: 'submitted', type: task.type, id: e.id, at: e.at, entryId: e.entryId, key: String(task.key ?? key) };
    if (e.dueAt !== undefined) out.dueAt = e.dueAt;
    if (e.delayMs !== undefined) out.delayMs = e.delayMs;
    const body = JSON.stringify(task.payload);
    if (body !== undefined) out.body = body;
    return out;
  } catch {
    return undefined;
  }
}

/**
 * The history events of one stream entry. On a route queue's delay-queue stream only the submits of
 * delayed ordered tasks count (as the ordered tasks' submits: their rows start there, not when they enter
 * their partition); the internal moves into the partition (its completions, starts, recoveries) are not
 * the tasks' lives, which their partitions' streams log.
 */
export function historyEventsOf(entry: StreamEntry, from: { type?: string; partition?: number }): HistoryEvent[] {
  const events = decodeStreamEntry(entry, from);
  if (!isOrderedDelayStream(from)) return events;
  return events.flatMap((e) => {
    const submit = e.event === 'submitted' ? orderedSubmit(e) : undefined;
    return submit ? [submit] : [];
  });
}

/** One stream entry's history events (see historyEventsOf), with the entry's id. */
export interface DecodedEntry {
  entryId: string;
  events: HistoryEvent[];
}

/** The history events of `entries` (read from the stream `from`), entry by entry. */
export function decodeEntries(entries: readonly StreamEntry[], from: { type?: string; partition?: number }): DecodedEntry[] {
  return entries.map((entry) => ({ entryId: entry[0], events: historyEventsOf(entry, from) }));
}
