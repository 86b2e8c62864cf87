import { TASK_EVENT_NAMES, type TaskEvent, type TaskEventName } from '../interfaces/task-event.interface';
import type { TaskErrorInfo } from '../interfaces/task.interface';

/** A stream entry as XREAD returns it: its id and a flat list of field, value. */
export type StreamEntry = [id: string, fields: string[]];

/** A JSON array field of an entry ([] when absent or unreadable). */
export const parseList = (text: string | undefined): unknown[] => {
  if (!text) return [];
  try {
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
  }
};

/**
 * The fleet events of one stream entry (see scripts/includes/event-log.lua): one event per task id, and a
 * `failed` before each `retrying` and `dead` (every failed attempt is a `failed` event, as locally).
 * `type` is the stream's type for a delay-queue stream; route entries name each task's type. An entry that
 * cannot be read gives no events.
 */
export function eventsOfEntry([entryId, flat]: StreamEntry, type?: string): TaskEvent[] {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i], flat[i + 1]);
  const name = fields.get('e') as TaskEventName;
  if (!TASK_EVENT_NAMES.includes(name)) return [];
  const ids = parseList(fields.get('ids'));
  const attempts = parseList(fields.get('a'));
  const types = parseList(fields.get('t'));
  const keys = parseList(fields.get('k'));
  const errors = parseList(fields.get('err')) as Partial<TaskErrorInfo>[];
  const at = Number(entryId.split('-')[0]);
  const out: TaskEvent[] = [];
  ids.forEach((id, i) => {
    const attempt = Number(attempts[i] ?? 0);
    const task = {
      id: String(id),
      type: String(types[i] ?? type ?? ''),
      payload: undefined,
      attempt,
      dueAt: 0,
      ...(keys[i] !== undefined ? { key: String(keys[i]) } : {}),
    };
    const e = errors[i];
    const error = e ? { name: String(e.name ?? 'Error'), message: String(e.message ?? ''), attempts: attempt, failedAt: at } : undefined;
    if (name === 'retrying' || name === 'dead') out.push({ event: 'failed', scope: 'fleet', task, error, at });
    out.push({ event: name, scope: 'fleet', task, error, at });
  });
  return out;
}
