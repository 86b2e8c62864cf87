import { DeliveryFailedError } from '../errors/delivery-failed.error';

/**
 * The most of a failed attempt's stack that is kept (in the dead letter, the events, the history row and the
 * log line), in UTF-8 bytes: whole lines from the top while they fit, then one line saying how many were cut.
 */
export const MAX_STACK_BYTES = 4096;

/** Room kept for the closing "... N more lines" line. */
const TAIL_BYTES = 48;

/**
 * `stack` bounded to `maxBytes` UTF-8 bytes, cut after a whole line, with a last line
 * `    ... N more lines` when lines were cut; undefined when it is not a non-empty string. A first line longer
 * than the bound on its own (a huge message) is cut inside.
 */
export function boundedStack(stack: unknown, maxBytes = MAX_STACK_BYTES): string | undefined {
  if (typeof stack !== 'string' || stack === '') return undefined;
  if (stack.length <= maxBytes / 3 || Buffer.byteLength(stack) <= maxBytes) return stack;
  const lines = stack.split('\n');
  const budget = maxBytes - TAIL_BYTES;
  const kept: string[] = [];
  let bytes = 0;
  for (const line of lines) {
    const size = Buffer.byteLength(line) + (kept.length > 0 ? 1 : 0);
    if (bytes + size > budget) break;
    kept.push(line);
    bytes += size;
  }
  if (kept.length === 0) {
    // NOTE: at most 3 UTF-8 bytes per UTF-16 unit; a high surrogate left alone at the cut is dropped
    let head = lines[0].slice(0, Math.floor(budget / 3));
    if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
    return `${head}\n    ... line cut, ${lines.length - 1} more lines`;
  }
  return `${kept.join('\n')}\n    ... ${lines.length - kept.length} more lines`;
}

/**
 * The stack kept of a failed attempt's error, bounded (see `MAX_STACK_BYTES`): a service-mode delivery's is
 * the one the application sent back (none when it sent none: the scheduler's own says nothing of the
 * handler); undefined for a thrown value that was not an Error (it had none).
 */
export function stackOf(error: Error): string | undefined {
  return boundedStack(error instanceof DeliveryFailedError ? error.remoteStack : error.stack);
}

/** `text` and the stack under it on the lines that follow, for a log line (`text` alone without a stack). */
export function withStack(text: string, stack: string | undefined): string {
  return stack ? `${text}\n${stack}` : text;
}

/** The most of a failed attempt's error message that is kept (stored, sent, logged), in UTF-8 bytes. */
export const MAX_MESSAGE_BYTES = 4096;

/**
 * `message` bounded to `maxBytes` UTF-8 bytes: cut, with ` … (N more characters)` appended, when longer. A
 * handler's error message is stored in the errors hash and the event stream and logged: a 1 MB message must
 * not become 1 MB in Redis per failure.
 */
export function boundedMessage(message: unknown, maxBytes = MAX_MESSAGE_BYTES): string {
  const text = typeof message === 'string' ? message : String(message);
  if (text.length <= maxBytes / 3 || Buffer.byteLength(text) <= maxBytes) return text;
  // NOTE: the first bytes that fit, less a character cut in its middle (decoded as U+FFFD at the end)
  const head = Buffer.from(text.slice(0, maxBytes)).subarray(0, maxBytes - 48).toString('utf8').replace(/\uFFFD$/, '');
  return `${head} … (${text.length - head.length} more characters)`;
}

/** The name and message of a failed attempt's error as kept: both bounded. */
export function keptError(error: { name?: unknown; message?: unknown }): { name: string; message: string } {
  return { name: boundedMessage(error.name ?? 'Error', 200), message: boundedMessage(error.message ?? '') };
}

/**
 * The log line of a failed attempt: `<head> failed (<name>: <message>)<tail>`, name and message bounded (see
 * `keptError`), with the stack (bounded) on the lines under it.
 */
export function failedAttemptLine(head: string, error: Error, tail = '', stack = stackOf(error)): string {
  const { name, message } = keptError(error);
  return withStack(`${head} failed (${name}: ${message})${tail}`, stack);
}
