import { InvalidArgumentError } from '../errors';
import type { TaskLogLine } from '../interfaces/task.interface';

/** The default of the module option `maxProgressBytes`: 4 KiB. */
export const DEFAULT_MAX_PROGRESS_BYTES = 4096;
/** The defaults of the module option `taskLogs`: lines and bytes kept per task. */
export const DEFAULT_TASK_LOGS = { maxLines: 200, maxBytes: 64 * 1024 };
/** A log line longer than this (UTF-16 units) is cut, and says so. */
export const MAX_LOG_LINE_LENGTH = 4096;

/**
 * A progress value as it is stored: its JSON.
 * @throws InvalidArgumentError for a value that is not JSON (undefined, a function, a cycle, a BigInt) or is
 *   larger than `maxBytes`
 */
export function progressText(value: unknown, maxBytes: number): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new InvalidArgumentError('progress', `must be JSON: ${(error as Error).message}`);
  }
  if (json === undefined) throw new InvalidArgumentError('progress', `must be JSON, got ${typeof value}`);
  if (json.length * 3 > maxBytes && Buffer.byteLength(json) > maxBytes) {
    throw new InvalidArgumentError('progress', `${Buffer.byteLength(json)} bytes as JSON, more than maxProgressBytes (${maxBytes})`);
  }
  return json;
}

/**
 * A log line as it is stored (see scripts/includes/task-logs.lua): the JSON array [attempt, epoch ms, text]
 * (no raw newline: lines are joined by them). A text longer than MAX_LOG_LINE_LENGTH is cut.
 * @throws InvalidArgumentError for a line that is not a string
 */
export function logLineText(attempt: number, line: unknown, at = Date.now()): string {
  if (typeof line !== 'string') throw new InvalidArgumentError('line', `must be a string, got ${line === null ? 'null' : typeof line}`);
  const text = line.length > MAX_LOG_LINE_LENGTH ? `${line.slice(0, MAX_LOG_LINE_LENGTH)}… (${line.length - MAX_LOG_LINE_LENGTH} characters cut)` : line;
  return JSON.stringify([attempt, at, text]);
}

/**
 * A task's kept log lines read back ("<dropped> <attempt> <last line's number> <lines>\n<line>\n...", see
 * scripts/includes/task-logs.lua), oldest first; unreadable lines are skipped.
 */
export function readLogs(text: string | null | undefined): { lines: TaskLogLine[]; dropped: number } | undefined {
  if (!text) return undefined;
  const [head, ...rows] = text.split('\n');
  const lines: TaskLogLine[] = [];
  for (const row of rows) {
    try {
      const [attempt, at, line] = JSON.parse(row) as [number, number, string];
      if (typeof line === 'string') lines.push({ attempt: Number(attempt), at: Number(at), line });
    } catch {
      // NOTE: a line cut by hand or by a future format: skipped, the others still read
    }
  }
  return { lines, dropped: parseInt(head, 10) || 0 };
}

/** A kept progress value read back (undefined: none, or unreadable). */
export function readProgress(text: string | null | undefined): { value: unknown } | undefined {
  if (!text) return undefined;
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}
