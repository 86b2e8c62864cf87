import { ShutdownError } from '../errors';
import { setLongTimeout } from './long-timer';

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
