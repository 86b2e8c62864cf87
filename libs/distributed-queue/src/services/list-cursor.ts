import { InvalidArgumentError } from '../errors';
import { quote } from '../errors/quote';
import type { WaitingCursor } from '../delay/waiting-page';

/**
 * Where a `listTaskPage` page starts: after a waiting task (due time and submission seq; waiting tasks are
 * paged by position, so a page never walks the tasks before it), or at an offset (running, dead and done tasks,
 * and the route queue's partitions, where an offset costs O(log n) or less).
 */
export type ListCursor = { state: string; after: WaitingCursor } | { state: string; offset: number };

/** The opaque text of a cursor: `<state>.<due>.<seq>`, `<state>.t<turn>.<seq>` or `<state>.@<offset>`. */
export function encodeCursor(cursor: ListCursor): string {
  if (!('after' in cursor)) return `${cursor.state}.@${cursor.offset}`;
  return `${cursor.state}.${cursor.after.turn ? 't' : ''}${cursor.after.due}.${cursor.after.seq}`;
}

/**
 * Reads a cursor given for `state` (undefined or '': the first page).
 * @throws InvalidArgumentError for a cursor that is not one, or one of another state's pages
 */
export function decodeCursor(text: unknown, state: string, waiting: boolean): ListCursor | null {
  if (text === undefined || text === '') return null;
  const match = typeof text === 'string' ? /^([a-z]+)\.(?:@(\d{1,15})|(t?)(\d{1,16})\.(\d{1,15}))$/.exec(text) : null;
  if (!match) throw new InvalidArgumentError('cursor', `must be the "next" of a page, got ${quote(String(text))}`);
  if (match[1] !== state || waiting !== (match[2] === undefined)) {
    throw new InvalidArgumentError('cursor', `${quote(text as string)} is not a cursor of the ${state} tasks of this type`);
  }
  if (match[2] !== undefined) return { state, offset: Number(match[2]) };
  return { state, after: match[3] ? { due: Number(match[4]), seq: Number(match[5]), turn: true } : { due: Number(match[4]), seq: Number(match[5]) } };
}
