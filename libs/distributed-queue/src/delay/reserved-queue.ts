import { PrefetchAllowance } from '../runtime/prefetch';
import type { Reservation } from './delay-queue.store';

/**
 * Tasks a consumer reserved that wait for a free slot, oldest first, and how many it may hold beyond its
 * slots (`extra`, see `PrefetchAllowance`). Their leases run as a running task's do: renewed, handed back
 * at shutdown, given up when lost.
 */
export class ReservedQueue {
  private items: Reservation[] = [];
  private readonly allowance: PrefetchAllowance;

  constructor(concurrency: number) {
    this.allowance = new PrefetchAllowance(concurrency);
  }

  get size(): number {
    return this.items.length;
  }

  /** Tasks that may be reserved beyond the consumer's slots now. */
  get extra(): number {
    return this.allowance.extra;
  }

  /** Records how long a handler took (ms): quick handlers allow reserving ahead. */
  recordDuration(ms: number): void {
    this.allowance.record(ms);
  }

  push(reservations: Reservation[]): void {
    for (const reservation of reservations) this.items.push(reservation);
  }

  /** Removes and returns up to `n` of the oldest. */
  shift(n: number): Reservation[] {
    return n >= this.items.length ? this.items.splice(0) : this.items.splice(0, n);
  }

  /** Removes one by id; undefined when it is not waiting here. */
  remove(id: string): Reservation | undefined {
    const at = this.items.findIndex((r) => r.id === id);
    return at < 0 ? undefined : this.items.splice(at, 1)[0];
  }

  /** The id and token of each (to renew or hand back their leases). */
  held(): [string, string][] {
    return this.items.map((r): [string, string] => [r.id, r.token]);
  }
}
