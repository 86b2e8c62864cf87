/**
 * Text as PostgreSQL stores it. Its text and json types refuse two things JavaScript strings and Redis hold:
 * the NUL character (U+0000) and a UTF-16 surrogate without its pair. A handler's error, result or log line
 * may carry them; the history writes each as U+FFFD (the replacement character) instead of failing the batch.
 */

import { SUSPECT, UNSTORABLE } from '../runtime/storable-text';

/** Every character PostgreSQL refuses (SUSPECT: anything it refuses, or a paired surrogate; checked first). */
const REFUSED = new RegExp(UNSTORABLE.source, 'g');

/** `s` with every character PostgreSQL refuses as U+FFFD (the same string when it has none: the usual case). */
export function pgText(s: string): string {
  return SUSPECT.test(s) ? s.replace(REFUSED, '\ufffd') : s;
}

/** In JSON text, an escape of a NUL or a surrogate (the escapes PostgreSQL may refuse), possibly after `\\`. */
const SUSPECT_ESCAPE = /\\u(0000|[dD][89a-fA-F])/;

/**
 * JSON text whose strings hold nothing PostgreSQL refuses: parsed and written again with `pgText` when it
 * has an escape PostgreSQL may refuse; else returned as it is. Text that is no JSON (a raw NUL in a string
 * is not) gets `pgText` alone: PostgreSQL judges the rest.
 */
export function pgJsonText(json: string): string {
  if (!SUSPECT_ESCAPE.test(json) && !SUSPECT.test(json)) return json;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return pgText(json);
  }
  return JSON.stringify(parsed, (_key, value: unknown) => (typeof value === 'string' ? pgText(value) : value));
}
