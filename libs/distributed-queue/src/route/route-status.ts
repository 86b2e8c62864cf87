import type { OrderedDeadTask, RouteStatus } from '../interfaces';
import { decodeDeadLetter } from './route-listing';
import type { RouteStore } from './route.store';

/** Who owns which partition, how much waits, and which machines are alive. */
export async function readRouteStatus(store: RouteStore): Promise<RouteStatus> {
  const n = await store.partitionCount();
  const [partitions, machines, lockHolder] = await Promise.all([
    Promise.all(Array.from({ length: n }, async (_, partition) => ({ partition, ...(await store.partitionState(partition)) }))),
    store.machines(),
    store.lockHolder(),
  ]);
  return { qId: store.options.qId, partitions, machines, lockHolder };
}

/** Dead letters of the route queue, per partition oldest first, at most `limit` per partition. */
export async function readOrderedDead(store: RouteStore, limit: number): Promise<OrderedDeadTask[]> {
  const n = await store.partitionCount();
  const lists = await Promise.all(Array.from({ length: n }, (_, p) => store.deadLetters(p, limit)));
  return lists.flatMap((entries, partition) =>
    entries.map((entry) => {
      const { task, item, diedAt, error } = decodeDeadLetter(entry);
      return { partition, diedAt, error, id: task?.id ?? '', type: task?.type ?? '', key: task?.key ?? '', payload: task?.payload ?? item };
    }),
  );
}

/**
 * Puts the oldest `limit` dead letters of every partition back at the tail of their partition (behind what
 * is queued now), one script per partition: each letter comes back exactly once. Unreadable ones are
 * dropped. Returns how many came back. `via` runs each partition's call (a durable call marks where).
 */
export async function redriveOrderedDead(
  store: RouteStore, limit: number,
  via: (partition: number, call: () => Promise<number>) => Promise<number> = (_p, call) => call(),
): Promise<number> {
  const n = await store.partitionCount();
  const counts = await Promise.all(Array.from({ length: n }, (_, p) => via(p, () => store.redriveDead(p, limit))));
  return counts.reduce((a, b) => a + b, 0);
}
