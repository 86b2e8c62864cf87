import type { LoggerService } from '@nestjs/common';
import type { RouteStore } from './route.store';

/**
 * Makes Redis hold `partitions` partitions: records the count on a new queue; on growth, sets resize
 * barriers so that a key whose partition changed cannot overtake its own older tasks; refuses to shrink.
 */
export async function ensureTopology(store: RouteStore, partitions: number): Promise<void> {
  const previous = await store.topology(partitions);
  // NOTE: every decision below derives from what Redis holds, so instances starting together agree.
  const grown = previous > 0;
  const barriers = await Promise.all(Array.from({ length: partitions }, (_, p) => store.initPartition(p, partitions, grown)));
  if (grown) await store.saveBarriers(barriers);
}

/**
 * Re-creates the queue's records when Redis no longer holds them (restarted without persistence, flushed,
 * failed over to an empty replica): every application ensured them at start-up, so a queue without a
 * partition count while they run has lost its data. Returns true when it re-created them (logged, once per
 * call that found the loss: instances racing to repair write the same records).
 */
export async function recreateIfLost(store: RouteStore, logger: Pick<LoggerService, 'warn'>): Promise<boolean> {
  if ((await store.partitionCount()) > 0) return false;
  const { qId, partitions } = store.options;
  await ensureTopology(store, partitions);
  logger.warn(
    `Route queue "${qId}": its records were gone from Redis (restarted without persistence, flushed, or failed over ` +
    `to an empty replica): re-created with ${partitions} partitions; the ordered tasks it held are lost`,
  );
  return true;
}

/**
 * True when every partition drained what it held before the last resize, so gated items may run; opens
 * the partition's gate then.
 */
export async function tryOpenGate(store: RouteStore, partition: number): Promise<boolean> {
  const barriers = await store.barriers();
  if (!barriers) return false;
  for (let q = 0; q < barriers.length; q++) {
    if (barriers[q] < 0) continue;
    const pending = await store.progress(q);
    if (pending >= 0 && pending <= barriers[q]) return false;
  }
  await store.openGate(partition);
  return true;
}
