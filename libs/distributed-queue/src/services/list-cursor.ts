import { InvalidArgumentError } from '../errors';
import { quote } from '../errors/quote';
import type { WaitingCursor } from '../delay/waiting-page';

/**
 * Where a `listTaskPage` page starts: after a waiting task (due time and submission seq; waiting tasks are
 * paged by position, so a page never walks the tasks before it), or at an offset (running, dead and done tasks,
 * and the route queue's partitions, where an offset costs O(log n) or less).
 */
export type ListCursor = { state: string; after: WaitingCursor } | { state: string; offset: number };

/**
 * The opaque text of a cursor: `<state>.<due>.<seq>`, `<state>.t<turn>.<seq>`, `<state>.g<turn>.<seq>.<group>`
 * (the group's name in base64url) or `<state>.@<offset>`.
 */
export function encodeCursor(cursor: ListCursor): string {
  if (!('after' in cursor)) return `${cursor.state}.@${cursor.offset}`;
  const { due, seq, turn, group } = cursor.after;
  if (group !== undefined) return `${cursor.state}.g${due}.${seq}.${Buffer.from(group, 'utf8').toString('base64url')}`;
  return `${cursor.state}.${turn ? 't' : ''}${due}.${seq}`;
}

/**
 * Reads a cursor given for `state` (undefined or '': the first page).
 * @throws InvalidArgumentError for a cursor that is not one, or one of another state's pages
 */
export function decodeCursor(text: unknown, state: string, waiting: boolean): ListCursor | null {
  if (text === undefined || text === '') return null;
  const match = typeof text === 'string' ? /^([a-z]+)\.(?:@(\d{1,15})|([tg]?)(\d{1,16})\.(\d{1,15})(?:\.([A-Za-z0-9_-]{0,1024}))?)$/.exec(text) : null;
  if (!match || (match[3] === 'g') !== (match[6] !== undefined)) {
    throw new InvalidArgumentError('cursor', `must be the "next" of a page, got ${quote(String(text))}`);
  }
  if (match[1] !== state || waiting !== (match[2] === undefined)) {
    throw new InvalidArgumentError('cursor', `${quote(text as string)} is not a cursor of the ${state} tasks of this type`);
  }
  if (match[2] !== undefined) return { state, offset: Number(match[2]) };
  const due = Number(match[4]);
  const seq = Number(match[5]);
  if (match[3] === 'g') return { state, after: { due, seq, turn: true, group: Buffer.from(match[6], 'base64url').toString('utf8') } };
  return { state, after: match[3] ? { due, seq, turn: true } : { due, seq } };
}

/** The cursor position of a waiting task of a page (see `WaitingRow`). */
export function cursorAt(row: WaitingCursor): WaitingCursor {
  const at: WaitingCursor = { due: row.due, seq: row.seq };
  if (row.turn) at.turn = true;
  if (row.group !== undefined) at.group = row.group;
  return at;
}
