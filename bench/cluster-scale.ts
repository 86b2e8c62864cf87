import { Cluster, Redis } from 'ioredis';
import { routeKeys } from 'nestjs-distributed-queue/route/route-keys';
import { hashSlot } from 'nestjs-distributed-queue/route/slot-spread';
import type { Task } from 'nestjs-distributed-queue';
import { startQueueApp, workerClass } from '../test/support/queue-app';
import { startRedisCluster, startRedisServer } from '../test/support/redis-server';
import type { Row } from './report';
import { payload, sampleServer, until } from './stats';

type Node = { host: string; port: number };


/** The master port serving each slot. */
async function slotOwners(node: Node): Promise<(slot: number) => number> {
  const client = new Redis(node);
  const ranges = (await client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
  client.disconnect();
  return (slot) => ranges.find(([from, to]) => slot >= from && slot <= to)![2][1];
}

/**
 * Creates a route queue of `partitions` on the cluster; returns the master holding each partition's
 * ownership record, as the cluster itself places it (CLUSTER KEYSLOT of a key that exists).
 */
async function partitionMasters(nodes: Node[], prefix: string, partitions: number, owner: (slot: number) => number): Promise<number[]> {
  const app = await startQueueApp({ connection: { cluster: nodes }, keyPrefix: prefix, workers: false, types: { ledger: { ordered: true } }, route: { qId: 'bench', partitions } });
  const cluster = new Cluster(nodes);
  try {
    const keys = routeKeys(prefix, 'bench');
    keys.useTags(await cluster.hget(keys.meta, 'tags'));
    return await Promise.all(Array.from({ length: partitions }, async (_, p) => {
      const own = keys.partition(p).own;
      if (!(await cluster.exists(own))) throw new Error(`partition ${p}: ${own} is not in the cluster`);
      return owner(Number(await cluster.call('CLUSTER', 'KEYSLOT', own)));
    }));
  } finally {
    cluster.disconnect();
    await app.close();
  }
}

/** Redis command calls of each node (INFO commandstats, INFO itself left out). */
async function callsOf(nodes: Node[]): Promise<number[]> {
  return Promise.all(nodes.map(async (node) => {
    const client = new Redis(node);
    try {
      return (await sampleServer(client)).calls;
    } finally {
      client.disconnect();
    }
  }));
}

/** Runs `perType` immediate tasks of each of `types` through one application (each type at concurrency 50). */
async function runTypes(connection: string | { cluster: Node[] }, prefix: string, types: string[], perType: number): Promise<number> {
  let done = 0;
  const producer = await startQueueApp({ connection, keyPrefix: prefix, workers: false, types: Object.fromEntries(types.map((t) => [t, {}])) });
  try {
    await Promise.all(types.map(async (type) => {
      for (let i = 0; i < perType; i += 1000) {
        await producer.submit.submitMany(type, Array.from({ length: Math.min(1000, perType - i) }, (_, j) => ({ payload: payload(i + j) })));
      }
    }));
    let first = 0;
    const workers = types.map((type) => workerClass(type, { concurrency: 50 }, (_task: Task) => {
      if (done++ === 0) first = performance.now();
    }));
    const app = await startQueueApp({ connection, keyPrefix: prefix, events: { stream: false } }, workers);
    try {
      await until(() => done >= types.length * perType, 300_000, 2);
      return (types.length * perType) / ((performance.now() - first) / 1000);
    } finally {
      await app.close();
    }
  } finally {
    await producer.close();
  }
}

/**
 * 9. Scale-out on a real 3-master cluster: three equally busy types (names chosen so that each type's slot
 * is on its own master: a type lives in one slot), run by one application against the cluster and against a
 * single server; Redis commands per master; where the route queue's partitions land.
 */
export async function clusterScale(quick: boolean): Promise<Row[]> {
  const perType = quick ? 10_000 : 30_000;
  const cluster = await startRedisCluster();
  const single = await startRedisServer({ extraArgs: ['--save', ''] });
  try {
    const owner = await slotOwners(cluster.nodes[0]);
    const prefix = `scale${Date.now()}`;
    const types: string[] = [];
    const masters = new Set<number>();
    for (let i = 0; types.length < 3; i++) {
      const type = `work.${i}`;
      const master = owner(hashSlot(`{${prefix}:${type}}`));
      if (!masters.has(master)) {
        masters.add(master);
        types.push(type);
      }
    }
    const ports = cluster.nodes.map((n) => n.port);
    const before = await callsOf(cluster.nodes);
    const clusterRate = await runTypes({ cluster: cluster.nodes }, prefix, types, perType);
    const after = await callsOf(cluster.nodes);
    const calls = after.map((a, i) => a - before[i]);
    const total = calls.reduce((a, b) => a + b, 0);
    const singleRate = await runTypes(single.url, prefix, types, perType);
    // Route queue partitions: each partition has its own hash tag; where do 12 of them land? The queue is
    // created on the cluster, and each partition's ownership record is looked up there.
    const partitions = 12;
    const perMaster = new Map<number, number>(ports.map((p) => [p, 0]));
    for (const master of await partitionMasters(cluster.nodes, prefix, partitions, owner)) perMaster.set(master, perMaster.get(master)! + 1);
    const bound = Math.ceil(partitions / 3) + 1;
    return [
      {
        workload: `9. scale-out: 3 types × ${perType} immediate, one app`,
        system: 'this library (3-master cluster)',
        figures: {
          'process/s': Math.round(clusterRate),
          'vs single server': `${Math.round((100 * clusterRate) / singleRate)} %`,
          'commands per master': calls.map((c) => `${Math.round((100 * c) / total)} %`).join(' / '),
          [`route partitions per master (${partitions}; bound ${bound})`]: [...perMaster.values()].join(' / '),
        },
      },
      { workload: `9. scale-out: 3 types × ${perType} immediate, one app`, system: 'this library (single server)', figures: { 'process/s': Math.round(singleRate) } },
    ];
  } finally {
    await single.remove();
    await cluster.stop();
  }
}
