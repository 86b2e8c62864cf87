import { ShutdownError } from '../errors';
import { setLongTimeout } from './long-timer';
import { withTimeout } from './with-timeout';

/**
 * How long a stopping component waits for one Redis call of its own (a deregistration, its last acks, a
 * read in flight) before it goes on without it. With Redis down, ioredis would hold such a call for its 20
 * reconnect attempts (about 10 s); what the call would have done is redone by others or expires.
 */
export const SHUTDOWN_CALL_MS = 1000;

/**
 * Waits for `call` (nothing to wait for when undefined) at most `ms`; rejects when it failed or took longer
 * (it goes on).
 */
export function shutdownCall<T>(call: Promise<T> | undefined, what: string, ms = SHUTDOWN_CALL_MS): Promise<T | undefined> {
  return call ? withTimeout(call, ms, what) : Promise.resolve(undefined);
}

/**
 * The stop both engines share: wait up to `graceMs` for the running work (`idle`) to finish; then abort
 * what is still running with a `ShutdownError` (handed back by the caller without counting an attempt).
 * Resolves true when everything finished within the grace period.
 */
export async function stopWithGrace(idle: Promise<unknown>, graceMs: number, abort: (reason: ShutdownError) => void): Promise<boolean> {
  let timer: { clear(): void } | undefined;
  const finished = await Promise.race([
    idle.then(() => true),
    new Promise<boolean>((resolve) => (timer = setLongTimeout(() => resolve(false), graceMs))),
  ]);
  timer?.clear();
  if (!finished) abort(new ShutdownError());
  return finished;
}
