/**
 * Callers waiting for an owner to be idle (e.g. nothing running, settling or fetching): the owner calls
 * `check()` whenever it may have become idle.
 */
export class IdleWaiters {
  private waiters: (() => void)[] = [];

  constructor(private readonly isIdle: () => boolean) {}

  /** Resolves every waiter when the owner is idle now. */
  check(): void {
    if (!this.isIdle()) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Resolves when the owner is idle. */
  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Resolves when the owner is idle or after `timeoutMs`, whichever comes first. */
  waitIdle(timeoutMs: number): Promise<unknown> {
    return Promise.race([this.whenIdle(), new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
  }
}
