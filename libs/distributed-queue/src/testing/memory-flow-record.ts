import { isNodeField, num } from './memory-flow-text';

/**
 * A flow's record as the flow scripts keep it (scripts/includes/flow-record.lua), its seven hashes one map
 * each, with the same fields and the same text values, so that every answer is built as the scripts build it.
 */
export interface MemoryFlow {
  /** HASH meta: state, id, total, created, ended, done, dead, deadFail, cancelled, blocked, cancel (insertion order, as HGETALL). */
  meta: Record<string, string>;
  /** HASH defs: ref -> def JSON; '\r<ref>' -> its dependencies' lines; '\n<ref>' -> its dependents' lines. */
  defs: Map<string, string>;
  /** The node fields of defs, in the order they were written (HSCAN's order here; getFlow sorts by `i`). */
  refs: string[];
  /** HASH st: ref -> 'c' | 'x' | 'k'. */
  st: Map<string, string>;
  /** HASH bk: '#<ref>' -> blocking count (text), '<ref>\n<dependency>' -> '1'. */
  bk: Map<string, string>;
  /** HASH res / err: ref -> result / error JSON. */
  res: Map<string, string>;
  err: Map<string, string>;
  /** The record's TTL (PEXPIRE, every key at once): the last ms it exists (Redis: expired once now > it); null: none. */
  expireAt: number | null;
}

/** An empty record: what a script reads of a flow that does not exist (no script writes into it then). */
export function freshFlow(): MemoryFlow {
  return { meta: {}, defs: new Map(), refs: [], st: new Map(), bk: new Map(), res: new Map(), err: new Map(), expireAt: null };
}

/** HSET (or HSETNX with `nx`) of a defs field. */
export function setDef(flow: MemoryFlow, field: string, value: string, nx: boolean): void {
  const known = flow.defs.has(field);
  if (known && nx) return;
  if (!known && isNodeField(field)) flow.refs.push(field);
  flow.defs.set(field, value);
}

/** HINCRBY of a meta counter. */
export function incrMeta(flow: MemoryFlow, field: string, by: number): void {
  flow.meta[field] = String(num(flow.meta[field]) + by);
}

/** One page of the node fields of defs (HSCAN of defs, its edge fields skipped): the next cursor ('0': the last). */
export function scanNodes(flow: MemoryFlow, cursor: string, count: number): { next: string; refs: string[] } {
  const from = Math.max(0, Math.floor(Number(cursor)) || 0);
  const to = from + Math.max(1, count);
  return { next: to < flow.refs.length ? String(to) : '0', refs: flow.refs.slice(from, to) };
}

/** The result ('c') or error ('x') JSON of a node, '' none. */
export function nodeJson(flow: MemoryFlow, ref: string, state: string): string {
  if (state === 'c') return flow.res.get(ref) ?? '';
  if (state === 'x') return flow.err.get(ref) ?? '';
  return '';
}

/** PEXPIRE of every key of the record (`ms` > 0), else PERSIST. */
export function expireFlow(flow: MemoryFlow, now: number, ms: number): void {
  flow.expireAt = ms > 0 ? now + ms : null;
}
