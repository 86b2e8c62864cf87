/**
 * Settles as `promise` does, or rejects with an Error saying that `what` took longer than `ms` (the promise
 * itself goes on; its later outcome is ignored). The timer is cleared either way and never keeps the
 * process alive.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no reply within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
