/**
 * Text Redis and PostgreSQL store as it is. A JavaScript string may hold what neither keeps: a UTF-16
 * surrogate without its pair (Redis strings are bytes: a string is sent as UTF-8, where an unpaired
 * surrogate becomes U+FFFD, so `'\ud800'` and `'\udbff'` would be one key) and the NUL character
 * (PostgreSQL's text refuses it: the history writes U+FFFD). Names the library keys data by (task ids,
 * types, groups, ordering and dedupe keys, flow refs) must be storable, or two of them would be one.
 */

/** A NUL or a surrogate: the only characters to look further at (the usual name has none). */
export const SUSPECT = /[\u0000\ud800-\udfff]/;
/** A NUL, a high surrogate not followed by a low one, a low one not after a high one. */
export const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when `s` holds neither a NUL nor an unpaired surrogate. */
export function isStorable(s: string): boolean {
  return !SUSPECT.test(s) || !UNSTORABLE.test(s);
}

/** What `isStorable` refuses, for error messages. */
export const STORABLE_RULE = 'without a NUL or an unpaired surrogate';

/**
 * True for `.` and `..`: names a URL cannot carry as a path segment (a browser or `fetch` resolves them, even
 * percent-encoded, before sending), so the dashboard could not address a task, type or group so named: a
 * group `..`'s pause would reach its type's. Ids, types, groups and flow ids may not be either.
 */
export function isDotSegment(s: string): boolean {
  return s === '.' || s === '..';
}

/** What `isDotSegment` refuses, for error messages. */
export const DOT_SEGMENT_RULE = 'not "." or ".."';
