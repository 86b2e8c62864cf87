import {
  InvalidSubmitOptionsError, PartitionFullError, PartitionShrinkError, type Task,
} from 'nestjs-distributed-queue';
import { RouteStore } from 'nestjs-distributed-queue/route/route.store';
import { ensureTopology } from 'nestjs-distributed-queue/route/route-topology';
import { createRedisClient } from 'nestjs-distributed-queue/redis/redis-connection';
import { resolveModuleOptions } from 'nestjs-distributed-queue/options/resolve-options';
import { redisNow, startQueueApp, useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('route queue rules on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  const producerOf = (prefix: string, qId: string, extra: object = {}) =>
    start({
      connection: target.connection, keyPrefix: prefix, workers: false, types: { ledger: { ordered: true } },
      route: { ...routeTestOptions(qId, 'producer'), ...extra },
    });

  it('a failing task blocks its key (with backoff) until it succeeds or is dead-lettered; other keys go on', async () => {
    const prefix = uniquePrefix('retry-order');
    const seen: string[] = [];
    let failures = 0;
    let healed = false;
    const W = workerClass('ledger', { ordered: true, maxAttempts: 3, backoff: { type: 'fixed', delayMs: 100, jitter: 0 } }, (task: Task<{ n: number }>) => {
      if (task.key === 'a' && task.payload.n === 1 && failures++ < 2) throw new Error('transient');
      if (task.key === 'a' && task.payload.n === 3 && !healed) throw new Error('permanent');
      seen.push(`${task.key}${task.payload.n}`);
    });
    const producer = await producerOf(prefix, 'q', { partitions: 1 });
    for (let n = 0; n < 6; n++) {
      await producer.submit.submitOrdered('ledger', 'a', { n });
      await producer.submit.submitOrdered('ledger', 'b', { n });
    }
    // One batch holds both keys: b runs on while a waits for its retries.
    const app = await start({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions('q', 'solo', 1) }, [W]);
    await waitFor(() => seen.filter((s) => s.startsWith('a')).length === 5 && seen.filter((s) => s.startsWith('b')).length === 6, { timeoutMs: 10_000 });
    expect(seen.filter((s) => s.startsWith('a'))).toEqual(['a0', 'a1', 'a2', 'a4', 'a5']);
    expect(seen.filter((s) => s.startsWith('b'))).toEqual(['b0', 'b1', 'b2', 'b3', 'b4', 'b5']);
    expect(seen.indexOf('b5')).toBeLessThan(seen.indexOf('a2'));
    const dead = await waitFor(async () => {
      const list = await app.inspect.listOrderedDead();
      return list.length === 1 ? list : null;
    }, { timeoutMs: 3000 });
    expect(dead[0]).toMatchObject({ key: 'a', type: 'ledger', payload: { n: 3 }, error: { message: 'permanent', attempts: 3 } });
    healed = true;
    expect(await app.inspect.redriveOrderedDead()).toBe(1);
    await waitFor(() => seen.includes('a3'), { timeoutMs: 5000, message: 'the re-driven task ran' });
    expect(await app.inspect.listOrderedDead()).toEqual([]);
  });

  it('re-drives ordered dead letters exactly once and in order, even when two re-drives race', async () => {
    const prefix = uniquePrefix('redrive-once');
    let healed = false;
    const seen: number[] = [];
    const W = workerClass('ledger', { ordered: true, maxAttempts: 1 }, (task: Task<{ n: number }>) => {
      if (!healed) throw new Error('not yet');
      seen.push(task.payload.n);
    });
    const app = await start({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions('q', 'solo', 2) }, [W]);
    for (let n = 0; n < 5; n++) await app.submit.submitOrdered('ledger', 'a', { n });
    const dead = await waitFor(async () => {
      const list = await app.inspect.listOrderedDead();
      return list.length === 5 ? list : null;
    }, { timeoutMs: 5000, message: 'five dead letters' });
    expect(dead.map((d) => d.payload)).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
    healed = true;
    const counts = await Promise.all([app.inspect.redriveOrderedDead(), app.inspect.redriveOrderedDead()]);
    expect(counts[0] + counts[1]).toBe(5);
    await waitFor(() => seen.length >= 5, { timeoutMs: 5000, message: 'the re-driven tasks ran' });
    await sleep(300);
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    expect(await app.inspect.redriveOrderedDead()).toBe(0);
    expect(await app.inspect.listOrderedDead()).toEqual([]);
  });

  it.each([
    ['Discard', { outcome: 'discarded' }],
    ['DiscardOldest', { outcome: 'dropped-oldest', droppedId: 'first' }],
  ] as const)('reject strategy %s tells the caller', async (strategy, expected) => {
    const prefix = uniquePrefix(`reject-${strategy}`);
    const app = await producerOf(prefix, 'q', { partitions: 1, maxPartitionSize: 3, rejectStrategy: strategy });
    for (const id of ['first', 'second', 'third']) {
      expect(await app.submit.submitOrdered('ledger', 'k', {}, { id })).toMatchObject({ id, outcome: 'queued', partition: 0 });
    }
    expect(await app.submit.submitOrdered('ledger', 'k', {}, { id: 'fourth' })).toMatchObject({ id: 'fourth', ...expected });
    const status = await app.inspect.getRouteStatus();
    expect(status.partitions[0].waiting).toBe(3);
  });

  it('submits many ordered tasks in bulk, keeping each key in order; Exception marks the overflow rejected', async () => {
    const prefix = uniquePrefix('bulk');
    const runs: string[] = [];
    const producer = await producerOf(prefix, 'q', { partitions: 2, maxPartitionSize: 1000, rejectStrategy: 'Exception' });
    const items = Array.from({ length: 60 }, (_, i) => ({ key: `k${i % 3}`, payload: { n: Math.floor(i / 3) } }));
    const results = await producer.submit.submitOrderedMany('ledger', items);
    expect(results.every((r) => r.outcome === 'queued')).toBe(true);
    const W = workerClass('ledger', { ordered: true }, (task: Task<{ n: number }>) => {
      runs.push(`${task.key}:${task.payload.n}`);
    });
    await start({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions('q', 'm1', 2) }, [W]);
    await waitFor(() => runs.length === 60, { timeoutMs: 5000 });
    for (const k of ['k0', 'k1', 'k2']) {
      expect(runs.filter((r) => r.startsWith(`${k}:`))).toEqual(Array.from({ length: 20 }, (_, n) => `${k}:${n}`));
    }
    const tight = await producerOf(uniquePrefix('bulk-full'), 'q2', { partitions: 1, maxPartitionSize: 2, rejectStrategy: 'Exception' });
    const outcomes = await tight.submit.submitOrderedMany('ledger', [1, 2, 3].map((n) => ({ key: 'k', payload: { n } })));
    expect(outcomes.map((r) => r.outcome)).toEqual(['queued', 'queued', 'rejected']);
  });

  it('reject strategy Exception throws PartitionFullError', async () => {
    const app = await producerOf(uniquePrefix('reject-exc'), 'q', { partitions: 1, maxPartitionSize: 2, rejectStrategy: 'Exception' });
    await app.submit.submitOrdered('ledger', 'k', {});
    await app.submit.submitOrdered('ledger', 'k', {});
    await expect(app.submit.submitOrdered('ledger', 'k', {})).rejects.toThrow(PartitionFullError);
    expect((await app.inspect.getRouteStatus()).partitions[0].waiting).toBe(2);
  });

  it('grows the partition count keeping per-key order; refuses to shrink', async () => {
    const prefix = uniquePrefix('grow');
    const keys = Array.from({ length: 40 }, (_, i) => `g-${i}`);
    const before = await producerOf(prefix, 'q', { partitions: 2 });
    for (let n = 0; n < 5; n++) for (const k of keys) await before.submit.submitOrdered('ledger', k, { n });
    await before.close();
    const runs = new Map<string, number[]>();
    const W = workerClass('ledger', { ordered: true }, async (task: Task<{ n: number }>) => {
      runs.set(task.key!, [...(runs.get(task.key!) ?? []), task.payload.n]);
      await sleep(1);
    });
    const grown = await start({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions('q', 'm1', 6) }, [W]);
    for (let n = 5; n < 10; n++) for (const k of keys) await grown.submit.submitOrdered('ledger', k, { n });
    await waitFor(() => keys.every((k) => runs.get(k)?.length === 10), { timeoutMs: 15_000 });
    for (const k of keys) expect(runs.get(k)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect((await grown.inspect.getRouteStatus()).partitions).toHaveLength(6);
    const error = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, route: routeTestOptions('q', 'x', 4) }).then(
      async (app) => {
        await app.close();
        return null;
      },
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(PartitionShrinkError);
    expect(error?.message).toMatch(/has 6 partitions; 4 is fewer/);
  });

  it('a delayed ordered task enters its partition when due', async () => {
    const prefix = uniquePrefix('delayed-ordered');
    const ran: { n: number; at: number }[] = [];
    const W = workerClass('ledger', { ordered: true }, (task: Task<{ n: number }>) => {
      ran.push({ n: task.payload.n, at: Date.now() });
    });
    const app = await start({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions('q', 'm1', 2) }, [W]);
    const submittedAt = Date.now();
    expect(await app.submit.submitOrdered('ledger', 'k', { n: 1 }, { delay: 300 })).toMatchObject({ outcome: 'scheduled' });
    await app.submit.submitOrdered('ledger', 'k', { n: 0 });
    await waitFor(() => ran.length === 2, { timeoutMs: 5000 });
    expect(ran.map((r) => r.n)).toEqual([0, 1]);
    expect(ran[1].at - submittedAt).toBeGreaterThanOrEqual(300);
  });

  it('a delayed ordered submit answers the partition its key maps to: the one an immediate submit of the key answers, where it runs', async () => {
    const ranIn = new Map<string, number>();
    const W = workerClass('ledger', { ordered: true }, (task: Task) => {
      ranIn.set(task.id, task.fence!.partition);
    });
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('delayed-partition'), route: routeTestOptions('q', 'm1', 8) }, [W]);
    const keys = Array.from({ length: 12 }, (_, i) => `key-${i}`);
    const now = await app.submit.submitOrderedMany('ledger', keys.map((key) => ({ key, payload: {} })));
    const one = await app.submit.submitOrdered('ledger', keys[5], {}, { delay: 50 });
    const many = await app.submit.submitOrderedMany('ledger', keys.map((key, i) => (i % 2 === 0 ? { key, payload: {}, delay: 50 } : { key, payload: {}, runAt: Date.now() + 50 })));
    expect(one).toMatchObject({ outcome: 'scheduled', partition: now[5].partition });
    expect(many.map((r) => r.outcome)).toEqual(keys.map(() => 'scheduled'));
    expect(many.map((r) => r.partition)).toEqual(now.map((r) => r.partition));
    expect(new Set(now.map((r) => r.partition)).size).toBeGreaterThan(1);
    await waitFor(() => ranIn.size === 2 * keys.length + 1, { timeoutMs: 10_000, message: 'every task ran' });
    for (const r of [...now, one, ...many]) expect(ranIn.get(r.id)).toBe(r.partition);
  });

  it("an ordered task's dueAt is Redis's time when it entered its partition, whatever the producer's clock says", async () => {
    const due: number[] = [];
    const W = workerClass('ledger', { ordered: true }, (task: Task) => {
      due.push(task.dueAt);
    });
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('ordered-due-at'), route: routeTestOptions('q', 'm1', 2) }, [W]);
    const before = await redisNow(redis());
    // This producer's clock is an hour ahead while it submits.
    const realNow = Date.now.bind(Date);
    const skew = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 3_600_000);
    try {
      await app.submit.submitOrdered('ledger', 'k', { n: 0 });
    } finally {
      skew.mockRestore();
    }
    const after = await redisNow(redis());
    await waitFor(() => due.length === 1, { timeoutMs: 5000 });
    expect(due[0]).toBeGreaterThanOrEqual(before);
    expect(due[0]).toBeLessThanOrEqual(after);
  });

  it('refuses mixed-up calls with typed errors', async () => {
    const app = await start({
      connection: target.connection, keyPrefix: uniquePrefix('ordered-input'), workers: false,
      types: { ledger: { ordered: true }, plain: {} }, route: routeTestOptions('q', 'p'),
    });
    await expect(app.submit.submit('ledger', {})).rejects.toThrow(InvalidSubmitOptionsError);
    await expect(app.submit.submit('ledger', {})).rejects.toThrow(/submitOrdered/);
    await expect(app.submit.submitOrdered('plain', 'k', {})).rejects.toThrow(/not ordered/);
    await expect(app.submit.submitOrdered('ledger', '', {})).rejects.toThrow(/"key"/);
  });

  it('instances creating a new queue together leave no partition gated', async () => {
    const options = resolveModuleOptions({ route: routeTestOptions('q', 'a', 4) }).route!;
    const client = createRedisClient(target.connection, 'commands', 'race-test');
    try {
      const store = new RouteStore(client, uniquePrefix('race'), options);
      // A records the count, B sees it before A initialised the partitions, B initialises first.
      const previousA = await store.topology(4);
      const previousB = await store.topology(4);
      for (let p = 0; p < 4; p++) expect(await store.initPartition(p, 4, previousB > 0)).toBe(-1);
      for (let p = 0; p < 4; p++) expect(await store.initPartition(p, 4, previousA > 0)).toBe(-1);
      await Promise.all([ensureTopology(store, 4), ensureTopology(store, 4)]);
      await store.push(0, 4, ['{"id":"1","type":"ledger","key":"k","at":0,"payload":{}}']);
      await store.assign(0, 'a', false);
      const { epoch } = await store.renew(0, 'a', false);
      expect((await store.take(0, 'a', epoch, 3)).status).toBe('ok');
    } finally {
      client.disconnect();
    }
  });

  it('fences pop and ack: a stale epoch gets nothing and acks nothing', async () => {
    const prefix = uniquePrefix('fence');
    const options = resolveModuleOptions({ route: routeTestOptions('q', 'a', 1) }).route!;
    const client = createRedisClient(target.connection, 'commands', 'fence-test');
    try {
      const store = new RouteStore(client, prefix, options);
      await store.topology(1);
      await store.initPartition(0, 1, false);
      await store.push(0, 1, ['{"id":"1","type":"ledger","key":"k","at":0,"payload":{}}']);
      expect(await store.assign(0, 'a', false)).toBe('moved');
      const a = await store.renew(0, 'a', false);
      const taken = await store.take(0, 'a', a.epoch, 3);
      expect(taken.status).toBe('ok');
      expect(await store.assign(0, 'b', false)).toBe('moved');
      const b = await store.renew(0, 'b', false);
      expect((await store.take(0, 'a', a.epoch, 3)).status).toBe('lost');
      expect(await store.ack(0, 'a', a.epoch, [1], [])).toBe('fenced');
      const replay = await store.take(0, 'b', b.epoch, 3);
      expect(replay).toMatchObject({ status: 'ok', replays: 1 });
      expect(replay.items).toHaveLength(1);
      expect(await store.ack(0, 'b', b.epoch, [1], [])).toBe('ok');
      expect((await store.take(0, 'b', b.epoch, 3)).status).toBe('empty');
    } finally {
      client.disconnect();
    }
  });
});
