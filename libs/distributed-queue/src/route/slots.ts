/**
 * A counting semaphore with a FIFO queue: at most `size` holders at once, waiters served in the order they
 * came. A machine has one per ordered type, shared by its partitions, so that the type's `concurrency`
 * bounds its handlers in the process whatever the number of partitions and keys.
 */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  /** Takes a free slot now, without waiting: true when taken (the hot path: no promise). */
  tryAcquire(): boolean {
    if (this.free === 0 || this.waiting.length > 0) return false;
    this.free--;
    return true;
  }

  /** Takes a slot: true once taken, false when `signal` aborted first (nothing taken, the wait left). */
  acquire(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const grant = () => {
        signal.removeEventListener('abort', leave);
        resolve(true);
      };
      const leave = () => {
        const i = this.waiting.indexOf(grant);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(false);
      };
      signal.addEventListener('abort', leave, { once: true });
      this.waiting.push(grant);
    });
  }

  /** Gives a slot back: to the longest waiter, if any. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}
