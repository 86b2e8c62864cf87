import { randomBytes, randomFillSync } from 'crypto';

/**
 * How long a script remembers a request id (and its reply): a command ioredis re-sends after a reconnect
 * arrives within this window (its default retry strategy gives up after about 20 reconnect attempts, ~10 s).
 */
export const REQUEST_TTL_MS = 60_000;

/**
 * The width of a request bucket: the replies of the calls whose ids were made within one such span share
 * one hash (`requestBucket`), so that a busy type's slot holds about REQUEST_TTL_MS / REQUEST_BUCKET_MS
 * reply keys, not one per call (a slot of a million keys takes a resharding minutes to move, and its
 * calls wait for it all along).
 */
export const REQUEST_BUCKET_MS = 1000;

/** This process's part of request ids: 72 random bits. */
const PROCESS_TAG = randomBytes(9).toString('base64url');
let counter = 0;

/**
 * A fresh id for one state-changing call, so that a re-sent copy of the call is recognised:
 * `<ms now, base 36>.<process tag><counter>`. The time names its reply's bucket (`requestBucket`): a call
 * repeated later with the same id (service mode's RPC retried, a split call's parts) finds its reply.
 */
export function newRequestId(): string {
  return `${Date.now().toString(36)}.${PROCESS_TAG}${(counter++).toString(36)}`;
}

/**
 * The id of the move of a due delayed ordered task into its partition, named after the task (see
 * `MoveCall`): a mover run again after a crash makes the same id, anchored at the task's due time.
 */
export function moveRequestId(dueAt: number, taskId: string): string {
  return `${Math.max(0, Math.floor(dueAt)).toString(36)}.mv.${taskId}`;
}

/** A request id's anchor: up to 9 base-36 digits (ms; 9 reach the year 5188) before its first dot. */
const ANCHOR = /^([0-9a-z]{1,9})\./;

/**
 * The bucket (a number, as a string) that keeps the reply of the call named `requestId`: the span of its
 * anchor time. An id without an anchor (from a client of an earlier version, in service mode) goes to the
 * bucket of now: it is still recognised when repeated within the same second.
 */
export function requestBucket(requestId: string, now = Date.now()): string {
  const anchor = ANCHOR.exec(requestId);
  const ms = anchor ? parseInt(anchor[1], 36) : now;
  return String(Math.floor(ms / REQUEST_BUCKET_MS));
}

/** Random bytes drawn in blocks: one call to the system's generator serves 256 ids. */
const ID_BYTES = 12;
const pool = Buffer.alloc(ID_BYTES * 256);
let used = pool.length;

/**
 * A random task id: 96 random bits as 16 base64url characters, the same as `randomBytes(12)` gives.
 * NOTE: drawn from a pool filled in blocks: one `randomBytes` call per id was a quarter of an ordered submit's CPU.
 */
export function randomTaskId(): string {
  if (used + ID_BYTES > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const id = pool.toString('base64url', used, used + ID_BYTES);
  used += ID_BYTES;
  return id;
}
