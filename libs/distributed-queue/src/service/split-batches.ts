/** `{"deliveries":[` and `]}` around the tasks' JSON, joined by commas: `JSON.stringify` of the batch. */
export const BATCH_HEAD = '{"deliveries":[';
export const BATCH_TAIL = ']}';

/**
 * Splits tasks (each with its JSON's size in bytes) into requests of at most `maxCount` tasks and at most
 * `maxBytes` bytes of body, in order. A task too big for any request on its own gets a request of its own.
 */
export function splitBatches<T extends { bytes: number }>(items: readonly T[], maxCount: number, maxBytes: number): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let size = BATCH_HEAD.length + BATCH_TAIL.length;
  for (const item of items) {
    const added = item.bytes + (current.length > 0 ? 1 : 0);
    if (current.length > 0 && (current.length >= maxCount || size + added > maxBytes)) {
      batches.push(current);
      current = [];
      size = BATCH_HEAD.length + BATCH_TAIL.length;
    }
    size += item.bytes + (current.length > 0 ? 1 : 0);
    current.push(item);
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
