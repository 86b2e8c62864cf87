/** A caller waiting for a slot, and the signal that makes it give up. */
interface Waiter {
  signal: AbortSignal;
  resolve: (granted: boolean) => void;
}

/**
 * A counting semaphore with a FIFO queue: at most `size` holders at once, waiters served in the order they
 * came. A machine has one per ordered type, shared by its partitions, so that the type's `concurrency`
 * bounds its handlers in the process whatever the number of partitions and keys.
 */
export class Slots {
  private free: number;
  private waiting: Waiter[] = [];
  /** Signals already watched: one abort listener per signal, not one per wait (the wait is the hot path). */
  private readonly watched = new WeakSet<AbortSignal>();

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
    if (!this.watched.has(signal)) {
      this.watched.add(signal);
      signal.addEventListener('abort', () => this.dropWaitersOf(signal), { once: true });
    }
    return new Promise((resolve) => this.waiting.push({ signal, resolve }));
  }

  /** Gives a slot back: to the longest waiter, if any. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next.resolve(true);
    else this.free++;
  }

  /** The waiters of an aborted signal leave the queue, with nothing taken. */
  private dropWaitersOf(signal: AbortSignal): void {
    const leaving = this.waiting.filter((w) => w.signal === signal);
    if (leaving.length === 0) return;
    this.waiting = this.waiting.filter((w) => w.signal !== signal);
    for (const waiter of leaving) waiter.resolve(false);
  }
}
