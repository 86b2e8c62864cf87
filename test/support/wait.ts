export interface WaitForOptions {
  /** Total time budget in ms (default 10000). */
  timeoutMs?: number;
  /** Delay between attempts in ms (default 20). */
  intervalMs?: number;
  /** Prefix of the timeout error message. */
  message?: string;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function describe(value: unknown): string {
  if (value instanceof Error) return value.stack ?? value.message;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Polls `fn` until it returns (or resolves to) a truthy value and returns that value.
 * Exceptions thrown by `fn` count as "not yet". Each attempt is itself bounded by the
 * remaining budget, so a hanging `fn` cannot make waitFor hang.
 */
export async function waitFor<T>(fn: () => T | Promise<T>, opts: WaitForOptions = {}): Promise<NonNullable<T>> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const intervalMs = opts.intervalMs ?? 20;
  const deadline = Date.now() + timeoutMs;
  let last: { value?: T; error?: unknown } = {};
  let attempts = 0;
  for (;;) {
    attempts++;
    const remaining = deadline - Date.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const timedOut = Symbol('timeout');
      const result = await Promise.race([
        Promise.resolve().then(fn),
        new Promise<typeof timedOut>((resolve) => {
          timer = setTimeout(() => resolve(timedOut), Math.max(remaining, 1));
        }),
      ]);
      if (result === timedOut) {
        last = { error: new Error(`attempt still pending after ${Math.max(remaining, 1)}ms`) };
      } else {
        if (result) return result as NonNullable<T>;
        last = { value: result as T };
      }
    } catch (error) {
      last = { error };
    } finally {
      if (timer) clearTimeout(timer);
    }
    if (Date.now() + intervalMs > deadline) {
      const detail = 'error' in last ? `last error: ${describe(last.error)}` : `last value: ${describe(last.value)}`;
      throw new Error(`${opts.message ?? 'waitFor timed out'} (after ${timeoutMs}ms, ${attempts} attempts; ${detail})`);
    }
    await sleep(intervalMs);
  }
}
