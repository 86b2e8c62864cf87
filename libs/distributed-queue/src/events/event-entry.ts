import { TASK_EVENT_NAMES, type TaskEvent, type TaskEventName } from '../interfaces/task-event.interface';
import { decodeStreamEntry, type StreamEntry } from './stream-entry';

/**
 * The fleet events of one stream entry (see scripts/includes/event-log.lua): one event per task id, and a
 * `failed` before each `retrying` and `dead` (every failed attempt is a `failed` event, as locally).
 * `type` is the stream's type for a delay-queue stream; route entries name each task's type. An entry that
 * cannot be read gives no events.
 */
export function eventsOfEntry(entry: StreamEntry, type?: string): TaskEvent[] {
  const out: TaskEvent[] = [];
  for (const decoded of decodeStreamEntry(entry, { type })) {
    const name = decoded.event as TaskEventName;
    if (!TASK_EVENT_NAMES.includes(name)) continue;
    const { id, at, key, error: e } = decoded;
    const attempt = decoded.attempt ?? 0;
    const task = { id, type: decoded.type, payload: undefined, attempt, dueAt: 0, ...(key !== undefined ? { key } : {}) };
    const error = e ? { ...e, attempts: attempt, failedAt: at } : undefined;
    if (name === 'retrying' || name === 'dead') out.push({ event: 'failed', scope: 'fleet', task, error, at });
    out.push({ event: name, scope: 'fleet', task, error, at });
  }
  return out;
}
