import { PREFETCH_STALL_MS, PrefetchAllowance } from '../runtime/prefetch';
import type { Reservation } from './delay-queue.store';

/** Id and token of a reservation: what renewing or handing back its lease takes. */
export type Held = [id: string, token: string];

/**
 * Tasks a consumer reserved that wait for a free slot, oldest first, and how many it may hold beyond its
 * slots (`extra`, see `PrefetchAllowance`). Their leases run as a running task's do: renewed, handed back
 * at shutdown, given up when lost. When no slot frees for `PREFETCH_STALL_MS` while tasks wait (the
 * handlers hang), the waiting ones go to `onStall` to be handed back, and none are reserved ahead until a
 * handler finishes again.
 */
export class ReservedQueue {
  private items: Reservation[] = [];
  private readonly allowance: PrefetchAllowance;
  private lastShiftAt = 0;
  private timer?: NodeJS.Timeout;

  constructor(
    concurrency: number,
    private readonly onStall: (stalled: Held[], ms: number) => void,
  ) {
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
    this.watch();
  }

  /** Removes and returns up to `n` of the oldest (slots freed for them). */
  shift(n: number): Reservation[] {
    this.lastShiftAt = Date.now();
    return n >= this.items.length ? this.items.splice(0) : this.items.splice(0, n);
  }

  /** Removes one by id; undefined when it is not waiting here. */
  remove(id: string): Reservation | undefined {
    const at = this.items.findIndex((r) => r.id === id);
    return at < 0 ? undefined : this.items.splice(at, 1)[0];
  }

  /** The id and token of each (to renew their leases). */
  held(): Held[] {
    return this.items.map((r): Held => [r.id, r.token]);
  }

  /** Removes every waiting task (to hand them back) and stops watching. */
  drain(): Held[] {
    const held = this.held();
    this.items = [];
    this.close();
    return held;
  }

  private close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Checks after `ms` whether a slot freed within the last `PREFETCH_STALL_MS`; if so, again when it will not have. */
  private watch(ms = PREFETCH_STALL_MS): void {
    if (this.timer || this.items.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.items.length === 0) return;
      const idle = Date.now() - this.lastShiftAt;
      if (idle < PREFETCH_STALL_MS) return this.watch(PREFETCH_STALL_MS - idle);
      this.allowance.reset();
      this.onStall(this.drain(), PREFETCH_STALL_MS);
    }, ms);
  }
}
