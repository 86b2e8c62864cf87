/** How long a task reserved ahead of a free slot is expected to wait for one, at most (ms). */
export const PREFETCH_WAIT_MS = 2;
/**
 * Tasks reserved ahead that saw no slot free for this long are handed back (their handlers hang: other
 * workers should have them), and nothing is reserved ahead until a handler finishes again.
 */
export const PREFETCH_STALL_MS = 100;
/** At most this many times `concurrency` reserved ahead. */
export const PREFETCH_MAX = 3;
/** Weight of the newest handler duration in the running mean. */
const WEIGHT = 0.1;

/**
 * How many tasks a consumer may reserve beyond its `concurrency`, to start as slots free: fewer, larger
 * takes when handlers are quick (each take costs a round trip, a socket write and a reply to parse, which
 * with handlers that take microseconds is most of a task's cost). Bounded so that a task reserved ahead
 * waits about `PREFETCH_WAIT_MS` for its slot: `PREFETCH_MAX * concurrency` extra while handlers take
 * under a third of that time, fewer as they get slower, none past `PREFETCH_WAIT_MS * concurrency` ms.
 * (Measured: takes of 100 instead of 50 at concurrency 50 ran a quarter faster.) Nothing extra until a handler
 * has finished (durations unknown).
 */
export class PrefetchAllowance {
  private meanMs: number | undefined;

  constructor(private readonly concurrency: number) {}

  /** Records a handler's duration (ms). */
  record(durationMs: number): void {
    this.meanMs = this.meanMs === undefined ? durationMs : this.meanMs + WEIGHT * (durationMs - this.meanMs);
  }

  /** Handlers stopped finishing: nothing extra until one finishes again. */
  reset(): void {
    this.meanMs = undefined;
  }

  /** Tasks that may be reserved beyond `concurrency` now. */
  get extra(): number {
    if (this.meanMs === undefined) return 0;
    const cap = PREFETCH_MAX * this.concurrency;
    if (this.meanMs * PREFETCH_MAX <= PREFETCH_WAIT_MS) return cap;
    return Math.min(cap, Math.floor((this.concurrency * PREFETCH_WAIT_MS) / this.meanMs));
  }
}
