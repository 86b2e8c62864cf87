import type { BackoffOptions } from '../interfaces';

/** Delay before retry number `retry` (1 = the first retry), for both engines. */
export function backoffDelay(backoff: Required<BackoffOptions>, retry: number, random = Math.random): number {
  const base =
    backoff.type === 'fixed'
      ? backoff.delayMs
      : Math.min(backoff.maxDelayMs, backoff.delayMs * 2 ** Math.min(retry - 1, 40));
  return Math.round(base * (1 - backoff.jitter * random()));
}
