/**
 * Durable submits (issue 27, item 1): with the `durability` option a call resolves only once replicas
 * acknowledged its write (`WAIT`), so a failover cannot lose what was acknowledged.
 *
 * Failure matrix (a Sentinel set of this file's own: 1 master, 1 replica, 3 sentinels, quorum 2,
 * down-after 1 s; the replication links go through a proxy delaying every chunk 500 ms each way; 8 loops
 * submitting delayed tasks, half with generated ids):
 * | cell | event | expected |
 * | (a) durability { replicas: 1 } | master SIGKILLed under load, sentinel failover (several times) | 0 acknowledged tasks lost (each runs), no generated id handed out twice; submits not confirmed reject with DurabilityError or RedisUnavailableError, never resolve |
 * | (b) no durability | the same | may lose acknowledged tasks: the count is logged (it shows the test can fail) |
 * | (c) durability, the replica stopped (SIGSTOP) | submit, reschedule | DurabilityError after timeoutMs, acknowledged 0, its result (id, outcome); the write is on the master; `durability: false` resolves |
 * | (d) re-drives, a server without replicas | redriveDead, redriveOrderedDead (module default), a bad per-call option | DurabilityError acknowledged 0 with the count, the letters back on the master; InvalidSubmitOptionsError, nothing re-driven |
 * | (d) bad options | replicas 0, timeoutMs >= redisTimeoutMs, with service.url, per call without the module option | InvalidOptionsError / InvalidSubmitOptionsError naming the option; no durable connection without it |
 * | (e) a cluster of this file's own, 3 masters + 3 replicas | ordered submitMany over partitions on the 3 masters | a WAIT on each master, resolved; one replica stopped: DurabilityError acknowledged 0 with every result |
 *
 * DQ_DURABILITY_FAILOVERS sets the failovers of (a) (default 3; the target is 5).
 */
import type { Task } from 'nestjs-distributed-queue';
import { DurabilityError, InvalidOptionsError, InvalidSubmitOptionsError, RedisUnavailableError } from 'nestjs-distributed-queue';
import { Redis } from 'ioredis';
import { replicasInSync } from './support/cluster-admin';
import { startQueueApp, workerClass, type QueueApp } from './support/queue-app';
import { startRedisCluster, type RedisClusterHandle } from './support/redis-server';
import { routeTestOptions } from './support/route';
import { useSentinelSet } from './support/sentinel-set';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

const FAILOVERS = Number(process.env.DQ_DURABILITY_FAILOVERS ?? 3);
const TYPE = 'dur.task';
const DURABLE = { replicas: 1, timeoutMs: 3000 };

interface Load {
  /** Payload tag -> id, for every acknowledged submit. */
  acked: Map<string, string>;
  /** Generated ids handed out, in order (a repeat: one handed out twice). */
  generated: string[];
  rejected: Map<string, number>;
  stallMs(): number;
  stop(): Promise<void>;
}

/** 8 loops submitting tasks due in 2 s (so that they wait in Redis through the failover) until stopped. */
function startLoad(app: QueueApp, label: string): Load {
  const acked = new Map<string, string>();
  const generated: string[] = [];
  const rejected = new Map<string, number>();
  let running = true;
  let seq = 0;
  let last = Date.now();
  let stall = 0;
  const loop = async (n: number): Promise<void> => {
    while (running) {
      const tag = `${label}-${n}-${seq++}`;
      try {
        const id = await app.submit.submit(TYPE, { tag }, n % 2 === 0 ? { delay: 2000 } : { id: tag, delay: 2000 });
        acked.set(tag, id);
        if (n % 2 === 0) generated.push(id);
        const now = Date.now();
        stall = Math.max(stall, now - last);
        last = now;
      } catch (error) {
        const name = (error as Error).name;
        rejected.set(name, (rejected.get(name) ?? 0) + 1);
        await sleep(50);
      }
    }
  };
  const loops = Array.from({ length: 8 }, (_, n) => loop(n));
  return { acked, generated, rejected, stallMs: () => stall, stop: async () => void ((running = false), await Promise.all(loops)) };
}

describe('durable submits (WAIT) through a Sentinel failover with a lagging replica', () => {
  const suite = useSentinelSet({ lagMs: 500 });
  const { apps } = suite;
  const ran = new Set<string>();

  async function start(durability: typeof DURABLE | undefined): Promise<QueueApp> {
    const app = await startQueueApp({
      connection: suite.set.connection, keyPrefix: uniquePrefix('dur'), redisTimeoutMs: 5000, durability,
    }, [workerClass(TYPE, { concurrency: 16, pollIntervalMs: 200 }, (t: Task<{ tag: string }>) => void ran.add(t.payload.tag))]);
    apps.push(app);
    return app;
  }

  /** Runs the load through `failovers` failovers; returns the acknowledged tasks that never ran. */
  async function underFailovers(app: QueueApp, label: string, failovers: number, waitMs: number): Promise<{ load: Load; lost: string[]; repeated: number; promotions: number[] }> {
    const load = startLoad(app, label);
    const promotions: number[] = [];
    try {
      for (let i = 0; i < failovers; i++) {
        await sleep(2500);
        promotions.push(await suite.set.failover());
      }
      await sleep(1000);
    } finally {
      await load.stop();
    }
    const runAll = (): boolean => [...load.acked.keys()].every((tag) => ran.has(tag));
    await waitFor(runAll, { timeoutMs: waitMs }).catch(() => undefined);
    const lost = [...load.acked.keys()].filter((tag) => !ran.has(tag));
    const repeated = load.generated.length - new Set(load.generated).size;
    // eslint-disable-next-line no-console
    console.log(`[durability ${label}] ${failovers} failovers (promoted after ${promotions.join(', ')} ms): acked ${load.acked.size}, lost ${lost.length}, generated ids repeated ${repeated}, stall ${load.stallMs()} ms, rejected ${JSON.stringify(Object.fromEntries(load.rejected))}`);
    return { load, lost, repeated, promotions };
  }

  it('(c) the replica stopped: a durable call rejects with DurabilityError after timeoutMs, its write on the master', async () => {
    const app = await start(DURABLE);
    expect(typeof (await app.submit.submit(TYPE, { tag: 'c0' }, { delay: 60_000 }))).toBe('string');
    const master = await suite.set.master();
    const stopped = suite.set.nodes.find((n) => n !== master)!;
    stopped.server.kill('SIGSTOP');
    try {
      const began = Date.now();
      const error = await app.submit.submit(TYPE, { tag: 'c1' }, { delay: 60_000, durability: { timeoutMs: 300 } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DurabilityError);
      const { acknowledged, required, timeoutMs, result } = error as DurabilityError<string>;
      expect({ acknowledged, required, timeoutMs }).toEqual({ acknowledged: 0, required: 1, timeoutMs: 300 });
      expect(Date.now() - began).toBeGreaterThanOrEqual(290);
      expect(await app.inspect.getState(TYPE, result)).toBe('delayed');
      const moved = await app.submit.reschedule(TYPE, result, { delay: 30_000, durability: { timeoutMs: 200 } }).catch((e: unknown) => e);
      expect(moved).toBeInstanceOf(DurabilityError);
      expect((moved as DurabilityError<boolean>).result).toBe(true);
      // Not durable for this call: resolves once the master applied it.
      expect(await app.submit.cancel(TYPE, result, { durability: false })).toBe('cancelled');
    } finally {
      stopped.server.kill('SIGCONT');
    }
    await suite.set.inSync();
  }, 30_000);

  it(`(a) durability on: 0 acknowledged tasks lost over ${FAILOVERS} failovers, unconfirmed submits reject`, async () => {
    const app = await start(DURABLE);
    const { load, lost, repeated } = await underFailovers(app, 'on', FAILOVERS, 20_000);
    expect(load.acked.size).toBeGreaterThan(50);
    expect(lost).toEqual([]);
    // No generated id handed out twice: an acknowledged submit's sequence increment is on the replica. (Issue 27:
    // it failed 1 run in 3 while the harness let the sentinels promote a replica still syncing, restarted
    // with a stale RDB; see failover() in support/sentinel-suite.set.ts.) Without durability both happen (test b).
    expect(repeated).toBe(0);
    for (const name of load.rejected.keys()) expect([DurabilityError.name, RedisUnavailableError.name]).toContain(name);
  }, 120_000);

  it('(b) durability off: the same failover may lose acknowledged tasks (logged)', async () => {
    const app = await start(undefined);
    const { load } = await underFailovers(app, 'off', 1, 6000);
    expect(load.acked.size).toBeGreaterThan(50);
  }, 90_000);
});

describe('durability options and a server without replicas', () => {
  const target = getTargets().find((t) => t.name === 'single')!;
  const apps: QueueApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });
  const start = async (options: Parameters<typeof startQueueApp>[0]): Promise<QueueApp> => {
    const app = await startQueueApp({ connection: target.connection, types: { [TYPE]: {} }, workers: false, ...options });
    apps.push(app);
    return app;
  };
  const refusal = (options: Parameters<typeof startQueueApp>[0]): Promise<unknown> => start(options).then(() => null, (e: unknown) => e);

  it('(d) bad options are refused naming the option; per-call durability needs the module option', async () => {
    for (const [options, option] of [
      [{ durability: { replicas: 0 } }, 'durability.replicas'],
      [{ durability: { replicas: 1, timeoutMs: 2000 }, redisTimeoutMs: 2000 }, 'durability.timeoutMs'],
      [{ mode: 'service', service: { appName: 'a', secret: 's'.repeat(32), publicUrl: 'http://a:1', url: 'http://s:4000' }, durability: { replicas: 1 }, connection: undefined }, 'durability'],
    ] as const) {
      const error = await refusal(options as never);
      expect(error).toBeInstanceOf(InvalidOptionsError);
      expect((error as InvalidOptionsError).option).toBe(option);
    }
    const prefix = uniquePrefix('dur-off');
    const app = await start({ keyPrefix: prefix });
    const error = await app.submit.submit(TYPE, {}, { durability: { replicas: 1 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidSubmitOptionsError);
    expect((error as InvalidSubmitOptionsError).message).toMatch(/module option "durability"/);
    expect(await app.submit.submit(TYPE, {}, { durability: false })).toMatch(/^#/);
    // Without the option no durable connection is opened.
    const redis = new Redis(target.connection as string);
    try {
      expect(await redis.client('LIST')).not.toContain(`dq:${prefix}:durable`);
    } finally {
      redis.disconnect();
    }
  });

  it('(d) re-drives of dead letters are durable calls too: DurabilityError acknowledged 0 with the count; a bad option writes nothing', async () => {
    const prefix = uniquePrefix('dur-redrive');
    const fail = (): never => {
      throw new Error('fails');
    };
    const app = await startQueueApp({
      connection: target.connection, keyPrefix: prefix, durability: { replicas: 1, timeoutMs: 100 }, route: routeTestOptions(prefix, 'm1', 2),
    }, [workerClass('dur.fail', { maxAttempts: 1, pollIntervalMs: 100 }, fail), workerClass('dur.ofail', { ordered: true, maxAttempts: 1 }, fail)]);
    apps.push(app);
    await app.submit.submit('dur.fail', {}, { id: 'x', durability: false });
    await app.submit.submitOrdered('dur.ofail', 'k', {}, { durability: false });
    await waitFor(async () => (await app.inspect.getState('dur.fail', 'x')) === 'dead', { timeoutMs: 10_000 });
    await waitFor(async () => (await app.inspect.listOrderedDead()).length === 1, { timeoutMs: 10_000 });
    const refused = await app.inspect.redriveDead('dur.fail', ['x'], 100, { durability: { replicas: 0 } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidSubmitOptionsError);
    expect(await app.inspect.getState('dur.fail', 'x')).toBe('dead');
    const error = await app.inspect.redriveDead('dur.fail', ['x']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DurabilityError);
    expect((error as DurabilityError<number>)).toMatchObject({ acknowledged: 0, result: 1 });
    const ordered = await app.inspect.redriveOrderedDead().catch((e: unknown) => e);
    expect(ordered).toBeInstanceOf(DurabilityError);
    expect((ordered as DurabilityError<number>)).toMatchObject({ acknowledged: 0, result: 1 });
  });

  it('(d) a server without replicas: a durable submit rejects with DurabilityError acknowledged 0, the task written', async () => {
    const app = await start({ keyPrefix: uniquePrefix('dur-none'), durability: { replicas: 1, timeoutMs: 100 } });
    const error = await app.submit.submitMany(TYPE, [{ payload: 1, id: 'a' }, { payload: 2 }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DurabilityError);
    const { acknowledged, result } = error as DurabilityError<{ id: string; created: boolean }[]>;
    expect(acknowledged).toBe(0);
    expect(result.map((r) => r.created)).toEqual([true, true]);
    expect(await app.inspect.getState(TYPE, 'a')).toBe('ready');
  });
});

describe('durable ordered submits on a cluster with replicas', () => {
  let cluster: RedisClusterHandle;
  let app: QueueApp | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicas: 1, nodeTimeoutMs: 2000 });
    await replicasInSync(cluster);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await cluster?.stop();
  });

  /** WAIT calls each master served so far, by port. */
  async function waits(): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    for (const server of cluster.servers) {
      const node = new Redis({ port: server.port, lazyConnect: true });
      try {
        if (!/role:master/.test(await node.info('replication'))) continue;
        out.set(server.port, Number(/cmdstat_wait:calls=(\d+)/.exec(await node.info('commandstats'))?.[1] ?? 0));
      } finally {
        node.disconnect();
      }
    }
    return out;
  }

  it('(e) an ordered submitMany over partitions on every master is confirmed on each', async () => {
    const prefix = uniquePrefix('dur-cl');
    app = await startQueueApp({
      connection: { cluster: cluster.nodes }, keyPrefix: prefix, route: routeTestOptions(prefix, 'm1', 6),
      types: { 'dur.o': { ordered: true } }, workers: false, durability: { replicas: 1, timeoutMs: 2000 },
    });
    const before = await waits();
    const items = Array.from({ length: 60 }, (_, i) => ({ key: `k${i}`, payload: i }));
    const results = await app.submit.submitOrderedMany('dur.o', items);
    expect(new Set(results.map((r) => r.partition)).size).toBe(6);
    expect(results.every((r) => r.outcome === 'queued')).toBe(true);
    const after = await waits();
    expect(after.size).toBe(3);
    // A WAIT on each master (the partitions spread over all three).
    for (const [port, calls] of after) expect(`${port}: ${calls - (before.get(port) ?? 0) > 0 ? 'waited' : 'no WAIT'}`).toBe(`${port}: waited`);

    // One master's replica stopped: the call is not confirmed there.
    const replica = cluster.servers.find((s) => !after.has(s.port))!;
    replica.kill('SIGSTOP');
    try {
      const error = await app.submit.submitOrderedMany('dur.o', items, { durability: { timeoutMs: 300 } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DurabilityError);
      expect((error as DurabilityError).acknowledged).toBe(0);
      expect((error as DurabilityError<unknown[]>).result).toHaveLength(60);
    } finally {
      replica.kill('SIGCONT');
    }
  }, 60_000);
});
