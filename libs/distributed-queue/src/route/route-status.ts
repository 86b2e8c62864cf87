import type { OrderedDeadTask, RouteStatus } from '../interfaces';
import { encodeRouteItem, type RouteProducer } from './route-producer';
import { decodeRouteItem, type RouteStore } from './route.store';

/** Who owns which partition, how much waits, and which machines are alive. */
export async function readRouteStatus(store: RouteStore): Promise<RouteStatus> {
  const client = store.redis;
  const n = await store.partitionCount();
  const partitions = await Promise.all(
    Array.from({ length: n }, async (_, partition) => {
      const k = store.keys.partition(partition);
      const [own, waiting, inFlight, dead] = await Promise.all([client.hgetall(k.own), client.llen(k.list), client.hlen(k.inflight), client.llen(k.dead)]);
      return { partition, owner: own.owner || null, epoch: Number(own.epoch ?? 0), state: own.state ?? 'active', waiting, inFlight, dead };
    }),
  );
  const flat = await client.zrange(store.keys.machines, 0, -1, 'WITHSCORES');
  const machines = [];
  for (let i = 0; i < flat.length; i += 2) machines.push({ id: flat[i], lastHeartbeat: Number(flat[i + 1]) });
  return { qId: store.options.qId, partitions, machines };
}

/** Dead letters of the route queue, per partition oldest first, at most `limit` per partition. */
export async function readOrderedDead(store: RouteStore, limit: number): Promise<OrderedDeadTask[]> {
  const client = store.redis;
  const n = await store.partitionCount();
  const lists = await Promise.all(Array.from({ length: n }, (_, p) => client.lrange(store.keys.partition(p).dead, 0, limit - 1)));
  return lists.flatMap((entries, partition) =>
    entries.map((entry) => {
      const { item, diedAt, error } = JSON.parse(entry) as { item: string; diedAt: number; error: OrderedDeadTask['error'] };
      const decoded = decodeRouteItem(item);
      return {
        partition, diedAt, error,
        id: decoded?.id ?? '', type: decoded?.type ?? '', key: decoded?.key ?? '', payload: decoded?.payload ?? item,
      };
    }),
  );
}

/**
 * Puts the oldest `limit` dead letters of every partition back at the tail of the partition of their key
 * (behind what is queued now), then removes them from the dead list. A crash in between runs them twice.
 */
export async function redriveOrderedDead(store: RouteStore, producer: RouteProducer, limit: number): Promise<number> {
  const client = store.redis;
  const n = await store.partitionCount();
  let total = 0;
  for (let p = 0; p < n; p++) {
    const key = store.keys.partition(p).dead;
    const entries = await client.lrange(key, 0, limit - 1);
    if (entries.length === 0) continue;
    const items = entries.map((entry) => decodeRouteItem((JSON.parse(entry) as { item: string }).item));
    const good = items.filter((item): item is NonNullable<typeof item> => item !== null);
    await producer.pushMany(
      good.map((item) => ({ key: item.key, id: item.id, item: encodeRouteItem(item.id, item.type, item.key, JSON.stringify(item.payload), item.at) })),
    );
    await client.ltrim(key, entries.length, -1);
    total += good.length;
  }
  return total;
}
