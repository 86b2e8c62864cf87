import { setLongTimeout, type LongTimer } from './long-timer';

/**
 * Sleeping until a time or until notified, for both engines: `sleep(ms)` resolves after `ms` or at the next
 * `notify()`; `wakeIn(ms)` arms one timer to notify (an earlier request replaces a later one, never the
 * reverse). `onWake` runs at every notification. `notified` tells whether a notification came since the
 * last `reset()`, so that one sent while the caller was busy is not slept through.
 */
export class WakeSignal {
  private readonly sleepers = new Set<() => void>();
  private timer?: LongTimer;
  private timerAt = Infinity;
  private closed = false;
  notified = false;

  constructor(private readonly onWake?: () => void) {}

  /** Wakes every sleeper now. */
  notify(): void {
    this.notified = true;
    for (const wake of [...this.sleepers]) wake();
    this.onWake?.();
  }

  /** Forgets earlier notifications. */
  reset(): void {
    this.notified = false;
  }

  /** Notifies in `ms` (at once when `ms` is not positive), unless a timer is armed for earlier. */
  wakeIn(ms: number): void {
    if (this.closed) return;
    if (!(ms > 0)) {
      this.notify();
      return;
    }
    const at = performance.now() + ms;
    if (at >= this.timerAt) return;
    this.timer?.clear();
    this.timerAt = at;
    this.timer = setLongTimeout(() => {
      this.timerAt = Infinity;
      this.notify();
    }, ms);
  }

  /** Resolves after `ms` or at the next notification, whichever comes first. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        timer.clear();
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setLongTimeout(done, ms);
      this.sleepers.add(done);
    });
  }

  /** Stops the timer and wakes the sleepers for good. */
  close(): void {
    this.closed = true;
    this.timer?.clear();
    for (const wake of [...this.sleepers]) wake();
  }
}
