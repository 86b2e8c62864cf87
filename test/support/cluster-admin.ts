import { Redis } from 'ioredis';
import { redisCommand, type RedisClusterHandle, type RedisServerHandle } from './redis-server';
import { sleep, waitFor } from './wait';

/** A plain connection to one node of a test cluster (no cluster client: admin commands go where sent). */
export function nodeClient(port: number): Redis {
  return new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, lazyConnect: false });
}

/** The hash slot of `key`, as the cluster computes it. */
export async function keySlot(port: number, key: string): Promise<number> {
  return Number(await redisCommand(port, ['CLUSTER', 'KEYSLOT', key]));
}

/** The server of `cluster` that serves `slot` as master now (asked of `askPort`, a live node). */
export async function masterOf(cluster: RedisClusterHandle, slot: number, askPort: number): Promise<RedisServerHandle> {
  const admin = nodeClient(askPort);
  try {
    const ranges = (await admin.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, string]][];
    const range = ranges.find(([from, to]) => slot >= from && slot <= to);
    if (!range) throw new Error(`slot ${slot} is not served`);
    return cluster.servers.find((s) => s.port === range[2][1])!;
  } finally {
    admin.disconnect();
  }
}

/** The node id of the server at `port`. */
export async function nodeId(port: number): Promise<string> {
  return (await redisCommand(port, ['CLUSTER', 'MYID'])) as string;
}

/** Waits until every replica of the cluster has its master link up (a failover then loses nothing). */
export async function replicasInSync(cluster: RedisClusterHandle): Promise<void> {
  await waitFor(async () => {
    for (const s of cluster.servers) {
      const info = (await redisCommand(s.port, ['INFO', 'replication'])) ?? '';
      if (/role:slave/.test(info) && !/master_link_status:up/.test(info)) return false;
    }
    return true;
  }, { timeoutMs: 20_000, message: 'replicas in sync' });
}

/** Waits until every live node says cluster_state:ok and no node is marked failed in the view of `port`. */
export async function clusterOk(cluster: RedisClusterHandle): Promise<void> {
  await waitFor(async () => {
    for (const s of cluster.servers.filter((server) => server.isRunning())) {
      const info = (await redisCommand(s.port, ['CLUSTER', 'INFO']).catch(() => '')) ?? '';
      if (!/cluster_state:ok/.test(info)) return false;
    }
    return true;
  }, { timeoutMs: 30_000, message: 'cluster state ok on every live node' });
}

/**
 * Moves `slot` from the master at `fromPort` to the one at `toPort` the way `redis-cli --cluster reshard`
 * does, slowly: IMPORTING/MIGRATING, then MIGRATE of `batch` keys at a time with `pauseMs` between batches
 * (a large slot moving), then SETSLOT NODE on both and the other masters. Resolves with the keys moved.
 * `started`, when given, runs once the slot is MIGRATING/IMPORTING, before any batch: it may move chosen keys
 * itself (`migrate`) and hold the slot in that state as long as it likes.
 */
export async function migrateSlot(
  slot: number, fromPort: number, toPort: number, masterPorts: number[],
  opts: { batch?: number; pauseMs?: number; started?: (control: { migrate(keys: string[]): Promise<void> }) => Promise<void> } = {},
): Promise<number> {
  const batch = opts.batch ?? 2;
  const pauseMs = opts.pauseMs ?? 200;
  const [fromId, toId] = await Promise.all([nodeId(fromPort), nodeId(toPort)]);
  const from = nodeClient(fromPort);
  const to = nodeClient(toPort);
  let moved = 0;
  try {
    await to.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', fromId);
    await from.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', toId);
    await opts.started?.({
      migrate: async (keys) => {
        await from.call('MIGRATE', '127.0.0.1', toPort, '', 0, 5000, 'REPLACE', 'KEYS', ...keys);
        moved += keys.length;
      },
    });
    for (;;) {
      const keys = (await from.call('CLUSTER', 'GETKEYSINSLOT', slot, batch)) as string[];
      if (keys.length === 0) break;
      await from.call('MIGRATE', '127.0.0.1', toPort, '', 0, 5000, 'REPLACE', 'KEYS', ...keys);
      moved += keys.length;
      await sleep(pauseMs);
    }
    await to.call('CLUSTER', 'SETSLOT', slot, 'NODE', toId);
    await from.call('CLUSTER', 'SETSLOT', slot, 'NODE', toId);
    for (const port of masterPorts.filter((p) => p !== fromPort && p !== toPort)) {
      await redisCommand(port, ['CLUSTER', 'SETSLOT', String(slot), 'NODE', toId]);
    }
    return moved;
  } finally {
    from.disconnect();
    to.disconnect();
  }
}
