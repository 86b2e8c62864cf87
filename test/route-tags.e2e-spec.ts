import { Cluster, Redis } from 'ioredis';
import type { Task } from 'nestjs-distributed-queue';
import { resolveModuleOptions } from 'nestjs-distributed-queue/options/resolve-options';
import { defineScripts, type RedisClient } from 'nestjs-distributed-queue/redis/script-loader';
import { encodeRouteItem } from 'nestjs-distributed-queue/route/route-producer';
import { partitionOf } from 'nestjs-distributed-queue/route/route-keys';
import { RouteStore } from 'nestjs-distributed-queue/route/route.store';
import { connect, useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('route partition tags on %s', (name, target) => {
  const { start } = useQueueApps(target);
  let client: RedisClient;
  beforeAll(() => {
    client = connect(target);
    defineScripts(client);
  });
  afterAll(() => client.disconnect());

  (name === 'cluster' ? it : it.skip)('a new queue spreads its 12 partitions 4 / 4 / 4 over the 3 masters', async () => {
    const prefix = uniquePrefix('tags-spread');
    await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { ledger: { ordered: true } }, route: routeTestOptions('q', 'p', 12) });
    const cluster = client as Cluster;
    const masters = cluster.nodes('master');
    const ranges = new Map<string, [number, number][]>();
    for (const [from, to, [host, port]] of (await cluster.cluster('SLOTS')) as unknown as [number, number, [string, number]][]) {
      const id = `${host}:${port}`;
      ranges.set(id, [...(ranges.get(id) ?? []), [from, to]]);
    }
    const store = new RouteStore(client, prefix, resolveModuleOptions({ route: routeTestOptions('q', 'p', 12) }).route!);
    expect(await store.partitionCount()).toBe(12);
    const perMaster = new Map<string, number>();
    for (let p = 0; p < 12; p++) {
      const own = store.keys.partition(p).own;
      expect(await cluster.exists(own)).toBe(1);
      const slot = Number(await cluster.cluster('KEYSLOT', own));
      const master = [...ranges].find(([, list]) => list.some(([from, to]) => slot >= from && slot <= to))![0];
      perMaster.set(master, (perMaster.get(master) ?? 0) + 1);
    }
    expect(masters).toHaveLength(3);
    expect([...perMaster.values()]).toEqual([4, 4, 4]);
  });

  it('a queue created before spread tags (no tags in its meta) keeps its plain keys: its tasks run, in order', async () => {
    const prefix = uniquePrefix('tags-plain');
    const options = resolveModuleOptions({ route: routeTestOptions('q', 'old', 4) }).route!;
    // What an earlier version left in Redis: the meta without `tags`, partitions under plain tags, tasks waiting.
    const old = new RouteStore(client, prefix, options);
    old.keys.useTags(null);
    await (client as Redis).hset(old.keys.meta, 'partitions', 4);
    for (let p = 0; p < 4; p++) await old.initPartition(p, 4, false);
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (const key of keys) {
      const items = Array.from({ length: 5 }, (_, n) => encodeRouteItem(`${key}${n}`, 'ledger', key, JSON.stringify({ n })));
      expect(await old.push(partitionOf(key, 4), 4, items)).toEqual(items.map(() => ({ outcome: 'queued' })));
    }

    const runs = new Map<string, number[]>();
    const Ledger = workerClass('ledger', { ordered: true }, (task: Task<{ n: number }>) => void runs.set(task.key!, [...(runs.get(task.key!) ?? []), task.payload.n]));
    const app = await start({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions('q', 'new', 4) }, [Ledger]);
    await waitFor(() => [...runs.values()].flat().length >= 30, { timeoutMs: 15_000, message: 'the old queue drained' });
    for (const key of keys) expect(runs.get(key)).toEqual([0, 1, 2, 3, 4]);
    // New submits go to the same plain partitions and run too.
    await app.submit.submitOrdered('ledger', 'a', { n: 5 });
    await waitFor(() => runs.get('a')!.length === 6, { timeoutMs: 10_000, message: 'a new task on the old queue ran' });
    expect(runs.get('a')).toEqual([0, 1, 2, 3, 4, 5]);
    expect(await (client as Redis).hget(old.keys.meta, 'tags')).toBeNull();
  });
});
