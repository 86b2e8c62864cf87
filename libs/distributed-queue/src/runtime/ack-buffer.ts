/**
 * How long a finished task may wait for its ack, so that acks go out in batches (with the next take when one
 * comes first) rather than one call per few tasks: a call costs more than a task. Both engines use it.
 */
export const ACK_DELAY_MS = 5;

/**
 * Finished work waiting to be told to Redis. `drain()` hands everything over for one call; when that call
 * fails, `restore()` puts the items back in front, in their order, so that nothing is lost or reordered.
 */
export class AckBuffer<T> {
  private items: T[] = [];

  push(item: T): void {
    this.items.push(item);
  }

  /** Takes every buffered item. */
  drain(): T[] {
    const out = this.items;
    this.items = [];
    return out;
  }

  /** Puts items of a failed call back ahead of those buffered since. */
  restore(items: T[]): void {
    if (items.length > 0) this.items = items.concat(this.items);
  }

  get size(): number {
    return this.items.length;
  }
}
