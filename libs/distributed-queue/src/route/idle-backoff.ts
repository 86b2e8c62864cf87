/** The first wait of an idle partition's safety take, and the longest. */
export const IDLE_MS = 1000;
const IDLE_MAX_MS = 10_000;

/**
 * How long an empty partition's owner waits before its safety take: 1 s, then twice as long each time the
 * partition is still empty, up to 10 s; back to 1 s on a wake-up. Work arriving wakes the owner at once
 * (the push publishes), and so does a reconnect (messages may have been missed): the safety take only covers
 * a wake-up lost otherwise. It was every second: an idle fleet of 4,096 partitions made about 4,000 take
 * calls (24,000 commands) a second.
 */
export class IdleBackoff {
  private next = IDLE_MS;

  /** The wait before the next safety take (each call doubles the one after, up to the longest). */
  wait(): number {
    const wait = this.next;
    this.next = Math.min(wait * 2, IDLE_MAX_MS);
    return wait;
  }

  /** Work may have come (a wake-up): the next wait is the first again. */
  reset(): void {
    this.next = IDLE_MS;
  }
}
