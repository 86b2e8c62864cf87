import { InvalidPayloadError, PayloadTooLargeError } from '../errors';
import type { TaskErrorInfo } from '../interfaces';
import { splitTraceContext } from '../tracing/trace-carrier';

/** Serialises a payload to JSON; throws `InvalidPayloadError` / `PayloadTooLargeError`. */
export function encodePayload(payload: unknown, maxBytes: number): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(payload);
  } catch (error) {
    throw new InvalidPayloadError(`not serialisable to JSON (${(error as Error).message})`);
  }
  if (json === undefined) {
    throw new InvalidPayloadError(`not serialisable to JSON (${payload === undefined ? 'undefined' : typeof payload})`);
  }
  const bytes = Buffer.byteLength(json);
  if (bytes > maxBytes) throw new PayloadTooLargeError(bytes, maxBytes);
  return json;
}

/**
 * A stored record: `<seq tag><payload>` for a task that never ran, `<priority mark><seq tag><payload>` for one
 * with a priority waiting by its due time (the mark: 'a' to 'z' for 1 to 26, else 'O' to 'R' for the
 * priority's 1 to 4 digits, then the digits), or
 * `~<attempts>:<seq>:<due>:<flags>:<payload>` otherwise (see scripts/includes/record.lua and seq-tag.lua);
 * the payload is its JSON, prefixed with the trace context it was submitted under when traced (see
 * tracing/trace-carrier.ts).
 */
export interface DecodedRecord {
  attempts: number;
  seq: number;
  dueAt: number;
  flags: string;
  /** 0 (the most urgent, and tasks without one) to 1000: flag `p<n>` of the long form, or the short form's. */
  priority: number;
  /** Its deadline (ms, Redis clock): flag `x<ms>` of the long form. */
  expireAt?: number;
  /** The payload JSON (without the trace context). */
  payload: string;
  /** The W3C traceparent it was submitted under, when traced. */
  traceContext?: string;
}

const RECORD = /^~(\d+):(\d+):(\d+):([a-z0-9]*):/;
const SEQ_TAG = /^[A-N]/;
/** The short form with a priority: 'a' to 'z' (1 to 26), or its digits' count as 'O' to 'R' and the digits. */
const SHORT_PRIORITY = /^[O-Ra-z]/;

/** A payload without the seq tag a never-run task's record begins with (JSON never begins with A-N). */
export function withoutSeqTag(text: string): string {
  const first = text.charCodeAt(0);
  return first >= 65 && first <= 78 ? text.slice(first - 63) : text;
}

/** A reservation `<stamp>:<attempt>:<due>:<holder>` (see scripts/includes/lease.lua): its attempt, due time and holder. */
export function decodeLease(lease: unknown): { attempt: number | null; due: number | null; holder: string | null } {
  if (!lease) return { attempt: null, due: null, holder: null };
  const [, attempt, due, ...holder] = String(lease).split(':');
  return { attempt: attempt ? Number(attempt) : null, due: due ? Number(due) : null, holder: holder.length > 0 ? holder.join(':') : null };
}

/** Splits a record; null when it is not one. `dueAt` is the score, for a bare record. */
export function decodeRecord(record: string, dueAt = 0): DecodedRecord | null {
  let priority = 0;
  if (SHORT_PRIORITY.test(record)) {
    const mark = record.charCodeAt(0);
    const digits = mark >= 97 ? 0 : mark - 78;
    priority = mark >= 97 ? mark - 96 : Number(record.slice(1, 1 + digits));
    record = record.slice(1 + digits);
    if (!Number.isInteger(priority) || !SEQ_TAG.test(record)) return null;
  }
  if (SEQ_TAG.test(record)) {
    const digits = record.charCodeAt(0) - 64;
    const seq = parseInt(record.slice(1, 1 + digits), 16);
    if (!Number.isFinite(seq)) return null;
    return withPayload({ attempts: 0, seq, dueAt, flags: '', priority }, record.slice(1 + digits));
  }
  const match = RECORD.exec(record);
  if (!match) return null;
  const flagged = /p(\d+)/.exec(match[4]);
  const expires = /x(\d+)/.exec(match[4]);
  const flags = match[4].replace(/p\d+/, '').replace(/o\d+/, '').replace(/x\d+/, '');
  const header: Omit<DecodedRecord, 'payload'> = { attempts: Number(match[1]), seq: Number(match[2]), dueAt: Number(match[3]), flags, priority: flagged ? Number(flagged[1]) : 0 };
  if (expires) header.expireAt = Number(expires[1]);
  return withPayload(header, record.slice(match[0].length));
}

function withPayload(header: Omit<DecodedRecord, 'payload'>, stored: string): DecodedRecord {
  const { json, traceContext } = splitTraceContext(stored);
  const decoded: DecodedRecord = { ...header, payload: json };
  if (traceContext !== undefined) decoded.traceContext = traceContext;
  return decoded;
}

/** Parses a stored error; a fallback when it is not JSON. */
export function decodeError(json: string | null): TaskErrorInfo | undefined {
  if (!json) return undefined;
  try {
    return JSON.parse(json) as TaskErrorInfo;
  } catch {
    return { name: 'Error', message: json, attempts: 0, failedAt: 0 };
  }
}

