import type { HistoryEvent } from '../history/history-event';

/** A stream entry as XREAD returns it: its id and a flat list of field, value. */
export type StreamEntry = [id: string, fields: string[]];

/** A JSON array field of an entry ([] when absent or unreadable). */
export const jsonList = (text: string | undefined): unknown[] => {
  if (!text) return [];
  try {
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
  }
};

const EVENTS = new Set<HistoryEvent['event']>(['submitted', 'rescheduled', 'started', 'completed', 'retrying', 'dead', 'cancelled', 'recovered']);

/** Whether `name` is an event an entry can log (what `decodeStreamEntry` reads). */
export const isStreamEvent = (name: string | undefined): name is HistoryEvent['event'] => EVENTS.has(name as HistoryEvent['event']);

/**
 * Decodes one entry of an event stream (see scripts/includes/event-log.lua and the scripts that log): one
 * event per task id, with every field the entry carries. The one reader of the format: fleet listeners and
 * the history writer both start from it. `type` is the stream's type for a delay-queue stream
 * (route entries name each task's type); `partition` is the route partition the stream belongs to. An entry
 * that cannot be read gives none.
 */
export function decodeStreamEntry([entryId, flat]: StreamEntry, from: { type?: string; partition?: number }): HistoryEvent[] {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i], flat[i + 1]);
  const event = fields.get('e');
  if (!isStreamEvent(event)) return [];
  const at = Number(entryId.split('-')[0]);
  const [ids, attempts, types, keys, errors, dues, delays, bodies, starts, results] = ['ids', 'a', 't', 'k', 'err', 'due', 'd', 'b', 's', 'r'].map((f) =>
    jsonList(fields.get(f)),
  );
  const machine = fields.get('m');
  return ids.map((id, i) => {
    const out: HistoryEvent = { event, type: String(types[i] ?? from.type ?? ''), id: String(id), at, entryId };
    if (attempts[i] !== undefined) out.attempt = Number(attempts[i]);
    if (dues[i] !== undefined) out.dueAt = Number(dues[i]);
    if (delays[i] !== undefined) out.delayMs = Number(delays[i]);
    // NOTE: the script's clock (due − delay), not the entry id's: XADD may stamp the entry a millisecond later.
    if (out.dueAt !== undefined && out.delayMs !== undefined) out.at = out.dueAt - out.delayMs;
    if (typeof bodies[i] === 'string') out.body = bodies[i] as string;
    if (typeof results[i] === 'string') out.result = results[i] as string;
    if (keys[i] !== undefined) out.key = String(keys[i]);
    if (from.partition !== undefined) out.partition = from.partition;
    if (machine) out.machine = machine;
    if (typeof starts[i] === 'number' && starts[i] !== 0) out.startedAt = starts[i] as number;
    const error = errors[i] as { name?: unknown; message?: unknown; stack?: unknown } | undefined;
    if (error) {
      out.error = { name: String(error.name ?? 'Error'), message: String(error.message ?? '') };
      // NOTE: entries written before stacks were kept have none
      if (typeof error.stack === 'string' && error.stack) out.error.stack = error.stack;
    }
    return out;
  });
}
