import { randomBytes, randomFillSync } from 'crypto';

/**
 * How long a script remembers a request id (and its reply): a command ioredis re-sends after a reconnect
 * arrives within this window (its default retry strategy gives up after about 20 reconnect attempts, ~10 s).
 */
export const REQUEST_TTL_MS = 60_000;

/** This process's part of request ids: 72 random bits. */
const PROCESS_TAG = randomBytes(9).toString('base64url');
let counter = 0;

/** A fresh id for one state-changing call, so that a re-sent copy of the call is recognised. */
export function newRequestId(): string {
  return `${PROCESS_TAG}${(counter++).toString(36)}`;
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
