/** The states a type's tasks are counted in, in the order the dashboard shows them. */
export const STATES = ['delayed', 'ready', 'running', 'dead', 'done'];

/** A duration in ms as "850 ms", "12.3 s", "4 min", "2 h", "3 d". */
export function formatDuration(ms) {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(abs)} ms`;
  if (abs < 60_000) return `${(abs / 1000).toFixed(abs < 10_000 ? 1 : 0)} s`;
  if (abs < 3_600_000) return `${Math.round(abs / 60_000)} min`;
  if (abs < 86_400_000) return `${Math.round(abs / 3_600_000)} h`;
  return `${Math.round(abs / 86_400_000)} d`;
}

/** A time relative to `now`: "in 5.0 s" or "12 s ago". */
export function formatRelative(at, now) {
  if (at === undefined || at === null) return '';
  return at >= now ? `in ${formatDuration(at - now)}` : `${formatDuration(now - at)} ago`;
}

/** An epoch-ms time as "2025-01-31 12:00:00.250 UTC". */
export function formatTime(at) {
  if (at === undefined || at === null || !Number.isFinite(Number(at))) return '';
  return `${new Date(Number(at)).toISOString().replace('T', ' ').replace('Z', '')} UTC`;
}

/** A name as shown: itself, or its JSON string when it shows nothing (white space or invisible characters only). */
export function formatName(name) {
  return /^[\s\u200b-\u200f\u2060\ufeff]*$/.test(name) ? JSON.stringify(name) : name;
}

/** A payload as indented JSON text (undefined as "(none)"). */
export function formatJson(value) {
  if (value === undefined) return '(none)';
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}
