import { InvalidArgumentError } from '../errors';

/** Where a page of a history search ended: its last row's sort key. */
export interface HistoryCursor {
  /** create_time, epoch ms. */
  createdAt: number;
  type: string;
  id: string;
}

/** An opaque base64url string for `cursor`. */
export function encodeHistoryCursor(cursor: HistoryCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.type, cursor.id]), 'utf8').toString('base64url');
}

/**
 * The cursor an `encodeHistoryCursor` string holds.
 * @throws InvalidArgumentError naming `cursor` for anything else
 */
export function decodeHistoryCursor(value: unknown): HistoryCursor {
  let parsed: unknown;
  try {
    if (typeof value !== 'string' || !/^[A-Za-z0-9_-]+$/.test(value)) throw new Error();
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    !Number.isSafeInteger(parsed[0]) ||
    typeof parsed[1] !== 'string' ||
    typeof parsed[2] !== 'string'
  ) {
    throw new InvalidArgumentError('cursor', 'not a cursor this search returned');
  }
  return { createdAt: parsed[0] as number, type: parsed[1], id: parsed[2] };
}
