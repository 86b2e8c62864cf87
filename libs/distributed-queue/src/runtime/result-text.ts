/** The default of the module option `maxResultBytes`: 64 KiB. */
export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024;

/**
 * How a handler's return value travels with its ack and is kept (see scripts/includes/results.lua): its JSON,
 * `!<bytes>` when it is larger than `maxBytes`, `!-1` when it is not JSON (a cycle, a BigInt), or undefined
 * when there is none (undefined, or a function: what JSON.stringify drops).
 * NOTE: JSON.stringify writes no raw newline, which separates the result from the reservation token.
 */
export function resultText(result: unknown, maxBytes: number): string | undefined {
  if (result === undefined) return undefined;
  let json: string | undefined;
  try {
    json = JSON.stringify(result);
  } catch {
    return '!-1';
  }
  if (json === undefined) return undefined;
  // NOTE: a JSON text is at most 3 bytes per UTF-16 unit: most results skip the byte count.
  if (json.length * 3 > maxBytes && Buffer.byteLength(json) > maxBytes) return `!${Buffer.byteLength(json)}`;
  return json;
}

/** A kept result read back: its value, or why it was not kept (its size in bytes; -1: it was not JSON). */
export type ReadResult = { value: unknown } | { notKept: number };

/** Reads a kept result's text (see `resultText`); undefined text: no result. */
export function readResult(text: string | null | undefined): ReadResult {
  if (text === null || text === undefined) return { value: undefined };
  if (text.startsWith('!')) return { notKept: Number(text.slice(1)) };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return { notKept: -1 };
  }
}
