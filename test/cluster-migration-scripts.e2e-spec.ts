/**
 * A slot migrating under the scripts (issue 27, item 2): the delay queue's scripts touch keys they do not
 * declare (the waiting set's chunks and count). While a slot migrates, Redis stops such a script at the
 * first of those keys that is not on its node, after the script's earlier writes, and the importing node
 * reads a key not yet moved as missing. Every such script declares the slot guard (a key that never
 * exists), so Redis answers TRYAGAIN before it starts, on both nodes, until the slot is settled; callers
 * wait for the migration (up to `slotMigrationTimeoutMs`), then reject with a typed error.
 *
 * Failure matrix (a cluster of this file's own, 3 masters; every key the scripts declare exists, as in a
 * deployment with events on, dead letters and retried tasks):
 * | cell                                                              | expected                                  |
 * | a handler fails while its type's slot migrates (its chunk is gone from the source) | the failure waits for the migration, then the task is retried (not lost half-failed) |
 * | cancel while the task's chunk alone moved to the importing node   | the call waits (no raw error), then cancels that task and no other |
 * | submits during a migration held longer than `redisTimeoutMs`      | they wait and succeed when it ends        |
 * | a migration held longer than `slotMigrationTimeoutMs`             | RedisUnavailableError naming the migration, within the bound; nothing written |
 * | an ordered push whose every declared key (partition list and record, its reply bucket, log, recorded flag) already moved to the importing node | it waits for the migration's end instead of running there after an ASK (where a durable call's WAIT, sent to the node the slot map names, would confirm nothing of it); then it is written once (failing first: it ran on the importing node at once) |
 */
import { RedisUnavailableError, type Task } from 'nestjs-distributed-queue';
import { delayQueueKeys } from 'nestjs-distributed-queue/redis/queue-keys';
import { routeKeys } from 'nestjs-distributed-queue/route/route-keys';
import { REQUEST_BUCKET_MS } from 'nestjs-distributed-queue/runtime/request-id';
import { routeTestOptions } from './support/route';
import { keySlot, masterOf, migrateSlot, nodeClient } from './support/cluster-admin';
import { startQueueApp, workerClass, type QueueApp } from './support/queue-app';
import { startRedisCluster, type RedisClusterHandle } from './support/redis-server';
import { uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe('scripts while their slot migrates', () => {
  let cluster: RedisClusterHandle;
  let app: QueueApp | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3 });
  }, 60_000);
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const nodes = (): { host: string; port: number }[] => cluster.servers.map((s) => ({ host: '127.0.0.1', port: s.port }));

  /** The type's slot, the master holding it, and another master to move it to. */
  async function slotOf(prefix: string, type: string): Promise<{ slot: number; from: number; to: number; masters: number[] }> {
    const port = cluster.servers[0].port;
    const slot = await keySlot(port, `{${prefix}:${type}}`);
    const from = (await masterOf(cluster, slot, port)).port;
    const masters = (await Promise.all([0, 6000, 12000].map((s) => masterOf(cluster, s, port)))).map((m) => m.port);
    return { slot, from, to: masters.find((p) => p !== from)!, masters };
  }

  /** Makes every key the delay scripts declare exist, as in a deployment with events on, dead letters and retried tasks. */
  async function everyKeyExists(port: number, prefix: string, type: string): Promise<void> {
    const keys = delayQueueKeys(prefix, type);
    const node = nodeClient(port);
    try {
      await node.zadd(keys.dead, 1, 'old-dead');
      await node.hset(keys.errors, 'old-dead', '{}');
      await node.zadd(keys.active, 9_999_999_999_999, 'held-elsewhere');
      await node.xadd(keys.log, '*', 'e', 'x');
    } finally {
      node.disconnect();
    }
  }

  /** The waiting set's chunk keys of `type` on the node at `port`. */
  async function chunksOf(port: number, slot: number, prefix: string, type: string): Promise<string[]> {
    const waiting = delayQueueKeys(prefix, type).waiting;
    const node = nodeClient(port);
    try {
      const inSlot = (await node.call('CLUSTER', 'GETKEYSINSLOT', slot, 1000)) as string[];
      return inSlot.filter((k) => k.startsWith(`${waiting}:`) && /^[A-N]/.test(k.slice(waiting.length + 1)));
    } finally {
      node.disconnect();
    }
  }

  it('a handler failing while its slot migrates: the failure waits for the migration, then the task is retried', async () => {
    const prefix = uniquePrefix('mg-fail');
    const attempts: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    app = await startQueueApp({ connection: { cluster: nodes() }, keyPrefix: prefix }, [
      workerClass('mg.f', { maxAttempts: 3, backoff: { type: 'fixed', delayMs: 50 }, pollIntervalMs: 200 }, async (t: Task) => {
        attempts.push(t.attempt);
        if (t.attempt === 1) {
          await gate;
          throw new Error('fails on the first attempt');
        }
      }),
    ]);
    const { slot, from, to, masters } = await slotOf(prefix, 'mg.f');
    await everyKeyExists(from, prefix, 'mg.f');
    await app.submit.submit('mg.f', {}, { id: 'keep', delay: 3_600_000 }); // keeps the waiting set's keys
    await app.submit.submit('mg.f', {}, { id: 'x' });
    await waitFor(() => attempts.length === 1, { timeoutMs: 10_000, message: 'first attempt started' });
    await migrateSlot(slot, from, to, masters, {
      batch: 100, pauseMs: 0,
      started: async ({ migrate }) => {
        await migrate(await chunksOf(from, slot, prefix, 'mg.f'));
        release(); // the failure is reported while the slot migrates, the task's chunk on the importing node
        await sleep(1500);
      },
    });
    await waitFor(() => attempts.length >= 2, { timeoutMs: 15_000, message: 'the task was retried after the migration' });
    expect(attempts.slice(0, 2)).toEqual([1, 2]);
  }, 60_000);

  it('cancel while the task\'s chunk alone moved: the call waits for the migration, then cancels that task only', async () => {
    const prefix = uniquePrefix('mg-cancel');
    app = await startQueueApp({ connection: { cluster: nodes() }, keyPrefix: prefix, workers: false, types: { 'mg.c': {} } });
    const { slot, from, to, masters } = await slotOf(prefix, 'mg.c');
    for (const id of ['c1', 'c2', 'c3']) await app.submit.submit('mg.c', {}, { id, delay: 3_600_000 });
    await everyKeyExists(from, prefix, 'mg.c');
    let settled: unknown;
    let cancel: Promise<unknown> | undefined;
    await migrateSlot(slot, from, to, masters, {
      batch: 100, pauseMs: 0,
      started: async ({ migrate }) => {
        const chunks = await chunksOf(from, slot, prefix, 'mg.c');
        expect(chunks.length).toBe(1);
        await migrate(chunks);
        cancel = app!.submit.cancel('mg.c', 'c2').then((r) => (settled = r), (e: unknown) => (settled = e));
        await sleep(1500);
        expect(settled).toBeUndefined(); // waiting for the slot, not answered with a raw error
      },
    });
    await cancel;
    expect(settled).not.toBeInstanceOf(Error);
    expect(await app.inspect.getState('mg.c', 'c2')).toBe('unknown');
    expect(await app.inspect.getState('mg.c', 'c1')).toBe('delayed');
    expect(await app.inspect.getState('mg.c', 'c3')).toBe('delayed');
  }, 60_000);

  it('submits during a migration held longer than redisTimeoutMs wait and succeed when it ends', async () => {
    const prefix = uniquePrefix('mg-wait');
    app = await startQueueApp({ connection: { cluster: nodes() }, keyPrefix: prefix, workers: false, types: { 'mg.w': {} }, redisTimeoutMs: 500 });
    await app.submit.submit('mg.w', {}, { id: 'before', delay: 60_000 });
    const { slot, from, to, masters } = await slotOf(prefix, 'mg.w');
    const submits: Promise<string>[] = [];
    const started = Date.now();
    await migrateSlot(slot, from, to, masters, {
      batch: 100, pauseMs: 0,
      started: async () => {
        for (let i = 0; i < 5; i++) submits.push(app!.submit.submit('mg.w', { i }, { delay: 60_000 }));
        await sleep(2000);
      },
    });
    const ids = await Promise.all(submits);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(new Set(ids).size).toBe(5);
    expect(await app.inspect.getState('mg.w', ids[4])).toBe('delayed');
  }, 60_000);

  it('a migration held longer than slotMigrationTimeoutMs: the call rejects with RedisUnavailableError naming it, nothing written', async () => {
    const prefix = uniquePrefix('mg-bound');
    app = await startQueueApp({ connection: { cluster: nodes() }, keyPrefix: prefix, workers: false, types: { 'mg.b': {} }, redisTimeoutMs: 300, slotMigrationTimeoutMs: 1000 });
    await app.submit.submit('mg.b', {}, { id: 'before', delay: 60_000 });
    const { slot, from, to, masters } = await slotOf(prefix, 'mg.b');
    let outcome: unknown;
    let tookMs = 0;
    await migrateSlot(slot, from, to, masters, {
      batch: 100, pauseMs: 0,
      started: async () => {
        const t0 = Date.now();
        outcome = await app!.submit.submit('mg.b', {}, { id: 'during', delay: 60_000 }).catch((e: unknown) => e);
        tookMs = Date.now() - t0;
      },
    });
    expect(outcome).toBeInstanceOf(RedisUnavailableError);
    expect(String((outcome as Error).message)).toMatch(/migrating/);
    expect(tookMs).toBeGreaterThanOrEqual(900);
    expect(tookMs).toBeLessThan(5000);
    expect(await app.inspect.getState('mg.b', 'during')).toBe('unknown');
    expect(await app.inspect.getState('mg.b', 'before')).toBe('delayed');
  }, 60_000);

  it("an ordered push whose keys all moved to the importing node waits for the migration's end (never runs there after an ASK)", async () => {
    const prefix = uniquePrefix('mg-push');
    app = await startQueueApp({ connection: { cluster: nodes() }, keyPrefix: prefix, workers: false, types: { 'mg.o': { ordered: true } }, route: routeTestOptions(prefix, 'm1', 1) });
    await app.submit.submitOrdered('mg.o', 'k', { i: 0 });
    const keys = routeKeys(prefix, prefix).partition(0);
    const port = cluster.servers[0].port;
    const slot = await keySlot(port, keys.list);
    const from = (await masterOf(cluster, slot, port)).port;
    const masters = (await Promise.all([0, 6000, 12000].map((s) => masterOf(cluster, s, port)))).map((m) => m.port);
    const to = masters.find((p) => p !== from)!;
    // Every key the push declares exists: the reply buckets of the next seconds too, whichever its id names.
    const node = nodeClient(from);
    const second = Math.floor(Date.now() / REQUEST_BUCKET_MS);
    for (let s = second; s < second + 30; s++) await node.hset(keys.requests(String(s)), 'other', '1');
    await node.set(keys.recorded, '1');
    await node.xadd(keys.log, '*', 'e', 'x');
    node.disconnect();
    let settled: unknown;
    let push: Promise<unknown> | undefined;
    await migrateSlot(slot, from, to, masters, {
      batch: 100, pauseMs: 0,
      started: async ({ migrate }) => {
        const source = nodeClient(from);
        const all = (await source.call('CLUSTER', 'GETKEYSINSLOT', slot, 1000)) as string[];
        source.disconnect();
        expect(all).toEqual(expect.arrayContaining([keys.list, keys.own, keys.recorded, keys.log]));
        await migrate(all);
        push = app!.submit.submitOrdered('mg.o', 'k', { i: 1 }).then((r) => (settled = r), (e: unknown) => (settled = e));
        await sleep(1500);
        expect(settled).toBeUndefined(); // waiting for the slot, not run on the importing node
      },
    });
    await push;
    expect(settled).toMatchObject({ outcome: 'queued' });
    const target = nodeClient(to);
    expect((await target.lrange(keys.list, 0, -1)).map((item) => JSON.parse(item.slice(item.indexOf('{'))).payload)).toEqual([{ i: 0 }, { i: 1 }]);
    target.disconnect();
  }, 60_000);
});
