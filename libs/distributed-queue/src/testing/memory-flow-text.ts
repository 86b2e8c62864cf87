import type { CascadeStep } from '../flow/flow.store';

/** The text rules of the flow scripts (flow-record.lua) and the Redis replies the in-memory flow store mimics. */

/**
 * flow-record.lua's `linesFrom`: at most `count` lines of `s` from position `pos` (1-based), the part of each
 * before its first tab; and the position to resume at (null: none left). Positions count UTF-16 units, not
 * bytes as in Lua: they are opaque to the callers (cascade steps, context pages), which only hand them back.
 */
export function linesFrom(s: string | undefined, pos: number, count: number): [string[], number | null] {
  const out: string[] = [];
  if (s === undefined) return [out, null];
  while (out.length < count && pos <= s.length) {
    let e = s.indexOf('\n', pos - 1) + 1;
    if (e === 0) e = s.length + 1;
    let tab = s.indexOf('\t', pos - 1) + 1;
    if (tab === 0 || tab > e) tab = e;
    out.push(s.slice(pos - 1, tab - 1));
    pos = e + 1;
  }
  return [out, pos <= s.length ? pos : null];
}

/** Whether a defs field holds a node (not the edges of one). */
export function isNodeField(field: string): boolean {
  const b = field.charCodeAt(0);
  return b !== 10 && b !== 13;
}

/** Lua's `string.format('%.0f', n)`: rounded half to even. */
export function wholeMs(n: number): string {
  const r = Math.round(n);
  return String(Math.abs(n % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r);
}

/** `tonumber(v) or 0`. */
export function num(v: string | undefined): number {
  const n = v === undefined || v === '' ? NaN : Number(v);
  return Number.isNaN(n) ? 0 : n;
}

/** A ZRANGE / ZREVRANGE of `sorted` by index, with Redis's rules for negative and out-of-range indexes. */
export function rangeOf<T>(sorted: T[], start: number, stop: number): T[] {
  const len = sorted.length;
  if (start < 0) start = Math.max(len + start, 0);
  if (stop < 0) stop = len + stop;
  if (start > stop || start >= len) return [];
  return sorted.slice(start, Math.min(stop, len - 1) + 1);
}

/** Resume pairs (ref, position) as `CascadeStep`s. */
export function resumePairs(flat: (string | number)[]): CascadeStep[] {
  const out: CascadeStep[] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([String(flat[i]), Number(flat[i + 1])]);
  return out;
}
