import { randomBytes } from 'crypto';

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
