/** The longest delay a Node timer takes; a longer one fires after 1 ms (with a TimeoutOverflowWarning). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timer made by `setLongTimeout`; `clear()` is safe to call more than once. */
export interface LongTimer {
  clear(): void;
}

/**
 * `setTimeout` for any delay: past `MAX_TIMER_MS` it waits in capped steps and re-arms, so that delays of
 * years neither overflow nor busy-loop. Non-finite or negative delays fire on the next turn.
 */
export function setLongTimeout(fn: () => void, ms: number, unref = false): LongTimer {
  const at = performance.now() + (Number.isFinite(ms) && ms > 0 ? ms : 0);
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    const left = at - performance.now();
    if (left > MAX_TIMER_MS) {
      timer = setTimeout(arm, MAX_TIMER_MS);
    } else {
      timer = setTimeout(fn, Math.max(0, left));
    }
    if (unref) timer.unref();
  };
  arm();
  return { clear: () => clearTimeout(timer) };
}
