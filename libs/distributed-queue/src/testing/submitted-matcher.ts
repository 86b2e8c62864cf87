import { AssertionError } from 'assert';
import { inspect } from 'util';
import type { SubmittedTask } from './memory-engine';

/** An asymmetric matcher (Jest's `expect.any(...)`, `expect.stringMatching(...)`, ...). */
export interface AsymmetricMatcher {
  asymmetricMatch(other: unknown): boolean;
}

/** A value compared as `matches` does: a partial object (any depth), an array, or an asymmetric matcher anywhere. */
export type PartialMatch<T> =
  | AsymmetricMatcher
  | (T extends readonly (infer E)[] ? readonly PartialMatch<E>[] : T extends Date ? Date : T extends object ? { [K in keyof T]?: PartialMatch<T[K]> } : T);

/**
 * What `expectSubmitted` compares payloads with: a partial payload (deep; checked against the payload type
 * of a contract; Jest's asymmetric matchers work anywhere) or a predicate.
 */
export type PayloadMatcher<P> = ((payload: P, task: SubmittedTask<P>) => boolean) | PartialMatch<P>;

const isAsymmetric = (value: unknown): value is AsymmetricMatcher =>
  typeof value === 'object' && value !== null && typeof (value as Partial<AsymmetricMatcher>).asymmetricMatch === 'function';

/**
 * Whether `actual` matches `expected`: objects by the keys `expected` names (recursively), arrays
 * element by element and of the same length, Dates by time, anything else by `Object.is`.
 */
export function matches(actual: unknown, expected: unknown): boolean {
  if (isAsymmetric(expected)) return expected.asymmetricMatch(actual);
  if (expected instanceof Date) return actual instanceof Date ? actual.getTime() === expected.getTime() : actual === expected.toISOString();
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => matches(actual[i], e));
  if (typeof expected === 'object' && expected !== null) {
    if (typeof actual !== 'object' || actual === null) return false;
    return Object.entries(expected).every(([key, value]) => matches((actual as Record<string, unknown>)[key], value));
  }
  return Object.is(actual, expected);
}

/** Throws unless `times` (default: at least one) of `submitted` match `matcher`. */
export function assertSubmitted<P>(type: string, submitted: SubmittedTask<P>[], matcher: PayloadMatcher<P> | undefined, times?: number): void {
  if (times !== undefined && (!Number.isInteger(times) || times < 0)) throw new TypeError(`times must be an integer from 0, got ${String(times)}`);
  const hits = submitted.filter((task) =>
    matcher === undefined ? true : typeof matcher === 'function' ? (matcher as (p: P, t: SubmittedTask<P>) => boolean)(task.payload, task) : matches(task.payload, matcher),
  );
  const ok = times === undefined ? hits.length > 0 : hits.length === times;
  if (ok) return;
  const wanted = times === undefined ? 'at least one task' : `${times} task${times === 1 ? '' : 's'}`;
  const what = matcher === undefined ? '' : typeof matcher === 'function' ? ' matching the predicate' : ` matching ${inspect(matcher, { depth: 6 })}`;
  const seen = submitted.length === 0 ? 'none was submitted' : `submitted (${submitted.length}):\n${submitted.map((t) => `  ${t.id}: ${inspect(t.payload, { depth: 6, breakLength: Infinity })}`).join('\n')}`;
  throw new AssertionError({ message: `expected ${wanted} of type "${type}"${what}, found ${hits.length}; ${seen}` });
}
