import { TASK_EVENT_NAMES, type TaskEvent, type TaskEventName } from '../interfaces/task-event.interface';
import { readResult } from '../runtime/result-text';
import { decodeStreamEntry, isStreamEvent, jsonList, type StreamEntry } from './stream-entry';

/**
 * The fleet events of one stream entry (see scripts/includes/event-log.lua): one event per task id, and a
 * `failed` before each `retrying` and `dead`, and before each `cancelled` that carries an error (a running
 * task's attempt ended by the cancel): every failed attempt is a `failed` event, as locally. A waiting task
 * cancelled ran no attempt: its entry has no error, and no `failed` comes.
 * `type` is the stream's type for a delay-queue stream; route entries name each task's type. An entry that
 * cannot be read gives no events, nor does an entry marked history-only (field `h`: an ordered task's
 * in-process retry, written with its ack for the history).
 */
export function eventsOfEntry(entry: StreamEntry, type?: string): TaskEvent[] {
  const out: TaskEvent[] = [];
  if (isHistoryOnly(entry)) return out;
  if (fieldOf(entry, 'e') === 'progress') return progressEvents(entry, type ?? '');
  const decoded = decodeStreamEntry(entry, { type });
  // NOTE: every event of an entry has the entry's name
  if (decoded.length === 0 || !TASK_EVENT_NAMES.includes(decoded[0].event as TaskEventName)) return out;
  for (const { event, id, at, key, error: e, attempt: a, type: taskType, result: text } of decoded) {
    const name = event as TaskEventName;
    const attempt = a ?? 0;
    const task: TaskEvent['task'] = key === undefined ? { id, type: taskType, payload: undefined, attempt, dueAt: 0 } : { id, type: taskType, payload: undefined, attempt, dueAt: 0, key };
    const error = e ? { ...e, attempts: attempt, failedAt: at } : undefined;
    if (name === 'retrying' || name === 'dead' || (name === 'cancelled' && error)) out.push({ event: 'failed', scope: 'fleet', task, error, at });
    const kept = text === undefined ? undefined : readResult(text);
    if (kept && 'value' in kept) out.push({ event: name, scope: 'fleet', task, error, at, result: kept.value });
    else out.push({ event: name, scope: 'fleet', task, error, at });
  }
  return out;
}

/** Events counted by task type, then by event name. */
export type EventCounts = Map<string, Partial<Record<TaskEventName, number>>>;

/**
 * Adds to `counts` the fleet events `eventsOfEntry` gives for `entry`, without building them (reading only the
 * entry's ids, and its types and errors where they decide): what `getActivity` counts, up to 10,000 entries of
 * up to a few hundred tasks each at a call, every 2 s while the dashboard's overview is open. Building the events
 * cost about 0.1 s of the event loop a call for one busy type.
 */
export function countEventsOfEntry(entry: StreamEntry, type: string | undefined, counts: EventCounts): void {
  if (isHistoryOnly(entry)) return;
  const name = fieldOf(entry, 'e');
  const add = (taskType: string, event: TaskEventName, n = 1): void => {
    const own = counts.get(taskType) ?? {};
    counts.set(taskType, own);
    own[event] = (own[event] ?? 0) + n;
  };
  if (name === 'progress') {
    const ids = jsonList(fieldOf(entry, 'ids'));
    if (ids.length > 0) add(type ?? '', 'progress', ids.length);
    return;
  }
  if (!isStreamEvent(name) || !TASK_EVENT_NAMES.includes(name as TaskEventName)) return;
  const event = name as TaskEventName;
  const ids = jsonList(fieldOf(entry, 'ids'));
  const typesField = fieldOf(entry, 't');
  const failedToo = event === 'retrying' || event === 'dead';
  if (typesField === undefined && event !== 'cancelled') {
    if (ids.length === 0) return;
    if (failedToo) add(type ?? '', 'failed', ids.length);
    add(type ?? '', event, ids.length);
    return;
  }
  const types = jsonList(typesField);
  const errors = event === 'cancelled' ? jsonList(fieldOf(entry, 'err')) : [];
  ids.forEach((_, i) => {
    const taskType = String(types[i] ?? type ?? '');
    if (failedToo || errors[i]) add(taskType, 'failed');
    add(taskType, event);
  });
}

/** The `progress` events of an entry (see scripts/delay/report-4.lua): ids, attempts `a`, values `p` (JSON arrays). */
function progressEvents(entry: StreamEntry, type: string): TaskEvent[] {
  const at = Number(entry[0].split('-')[0]);
  try {
    const ids = JSON.parse(fieldOf(entry, 'ids') ?? '[]') as string[];
    const attempts = JSON.parse(fieldOf(entry, 'a') ?? '[]') as number[];
    const values = JSON.parse(fieldOf(entry, 'p') ?? '[]') as unknown[];
    return ids.map((id, i) => ({ event: 'progress', scope: 'fleet', task: { id: String(id), type, payload: undefined, attempt: Number(attempts[i] ?? 0), dueAt: 0 }, progress: values[i], at }));
  } catch {
    return [];
  }
}

function fieldOf([, flat]: StreamEntry, name: string): string | undefined {
  for (let i = 0; i + 1 < flat.length; i += 2) if (flat[i] === name) return flat[i + 1];
  return undefined;
}

/** Whether an entry is the history's own (field `h`), not an event of the fleet's. */
function isHistoryOnly([, flat]: StreamEntry): boolean {
  for (let i = 0; i + 1 < flat.length; i += 2) if (flat[i] === 'h') return true;
  return false;
}
