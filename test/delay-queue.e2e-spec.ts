import type { Cluster, Redis } from 'ioredis';
import type { Task } from 'nestjs-distributed-queue';
import { DelayQueueStore } from 'nestjs-distributed-queue/delay/delay-queue.store';
import { keysOf, useQueueApps, percentiles, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('delay queue on %s', (_name, target) => {
  const { start, redis: client } = useQueueApps(target);
  let redis: Redis | Cluster;
  beforeEach(() => {
    redis = client();
  });

  it('runs every due task exactly once, never before its due time, with small lateness', async () => {
    const keyPrefix = uniquePrefix('ontime');
    const runs: { id: string; late: number; attempt: number }[] = [];
    const W = workerClass('ontime', { concurrency: 20, pollIntervalMs: 60_000 }, (task: Task) => {
      runs.push({ id: task.id, late: Date.now() - task.dueAt, attempt: task.attempt });
    });
    const a = await start({ connection: target.connection, keyPrefix }, [W]);
    const b = await start({ connection: target.connection, keyPrefix }, [W]);
    const items = Array.from({ length: 300 }, (_, i) => ({ payload: { i }, delay: Math.floor(Math.random() * 1500) }));
    const results = await a.submit.submitMany('ontime', items);
    expect(results.every((r) => r.created)).toBe(true);
    await waitFor(() => runs.length >= 300, { timeoutMs: 15_000, message: 'all 300 tasks run' });
    await sleep(200);
    expect(runs).toHaveLength(300);
    expect(new Set(runs.map((r) => r.id)).size).toBe(300);
    expect(runs.every((r) => r.attempt === 1)).toBe(true);
    // NOTE: the due time is on the Redis clock; Redis runs on this machine, so Date.now() compares.
    const early = runs.filter((r) => r.late < 0);
    expect(early).toEqual([]);
    const stats = percentiles(runs.map((r) => r.late));
    console.log(`[${target.name}] lateness over 300 tasks with 2 workers (poll disabled): ${JSON.stringify(stats)} ms`);
    expect(stats.p99).toBeLessThan(500);
    expect(await b.inspect.getState('ontime', results[0].id)).toBe('done');
  });

  it('wakes for an earlier task without the safety poll: timer and notification', async () => {
    const keyPrefix = uniquePrefix('wake');
    const ran = new Map<string, number>();
    const W = workerClass('wake', { pollIntervalMs: 60_000 }, (task: Task) => {
      ran.set(task.id, Date.now() - task.dueAt);
    });
    const app = await start({ connection: target.connection, keyPrefix }, [W]);
    await sleep(100); // the worker is idle: nothing is due
    await app.submit.submit('wake', {}, { id: 'late', delay: 20_000 });
    await app.submit.submit('wake', {}, { id: 'soon', delay: 300 });
    await waitFor(() => ran.has('soon'), { timeoutMs: 3000, message: 'the earlier task ran' });
    expect(ran.get('soon')).toBeGreaterThanOrEqual(0);
    expect(ran.get('soon')).toBeLessThan(200);
    await app.submit.submit('wake', {}, { id: 'now' });
    await waitFor(() => ran.has('now'), { timeoutMs: 1000, message: 'the ready task ran' });
    expect(ran.has('late')).toBe(false);
    expect(await app.inspect.getState('wake', 'late')).toBe('delayed');
  });

  it('does not create a second task for an existing id', async () => {
    const keyPrefix = uniquePrefix('dup');
    const seen: string[] = [];
    const W = workerClass('dup', {}, (task: Task<{ v: number }>) => {
      seen.push(`${task.id}:${task.payload.v}`);
    });
    const producer = await start({ connection: target.connection, keyPrefix, workers: false, types: { dup: {} } });
    const first = await producer.submit.submitMany('dup', [{ id: 'x', payload: { v: 1 }, delay: 200 }]);
    const again = await producer.submit.submitMany('dup', [{ id: 'x', payload: { v: 2 } }]);
    expect(first).toEqual([{ id: 'x', created: true }]);
    expect(again).toEqual([{ id: 'x', created: false }]);
    expect((await producer.inspect.getTask('dup', 'x')).payload).toEqual({ v: 1 });
    await start({ connection: target.connection, keyPrefix }, [W]);
    await waitFor(() => seen.length === 1, { timeoutMs: 3000 });
    await sleep(300);
    expect(seen).toEqual(['x:1']);
  });

  it('reserves no more tasks than free slots while handlers are slow (30 ms at concurrency 3)', async () => {
    const keyPrefix = uniquePrefix('slots');
    const keys = keysOf(keyPrefix, 'slots');
    let running = 0;
    let maxRunning = 0;
    let done = 0;
    const W = workerClass('slots', { concurrency: 3 }, async () => {
      maxRunning = Math.max(maxRunning, ++running);
      await sleep(30);
      running--;
      done++;
    });
    const producer = await start({ connection: target.connection, keyPrefix, workers: false, types: { slots: {} } });
    await producer.submit.submitMany('slots', Array.from({ length: 30 }, (_, i) => ({ payload: i })));
    await start({ connection: target.connection, keyPrefix }, [W]);
    let maxActive = 0;
    await waitFor(async () => {
      maxActive = Math.max(maxActive, await redis.zcard(keys.active));
      return done === 30;
    }, { timeoutMs: 10_000, intervalMs: 5 });
    expect(maxRunning).toBe(3);
    expect(maxActive).toBeGreaterThan(0);
    expect(maxActive).toBeLessThanOrEqual(3);
  });

  it('reserves up to three times concurrency more ahead while handlers are quick, never running more than concurrency', async () => {
    const keyPrefix = uniquePrefix('ahead');
    const n = 400;
    let running = 0;
    let maxRunning = 0;
    const runs = new Map<string, number>();
    const W = workerClass('ahead', { concurrency: 4 }, async (task: Task) => {
      maxRunning = Math.max(maxRunning, ++running);
      runs.set(task.id, (runs.get(task.id) ?? 0) + 1);
      await Promise.resolve();
      running--;
    });
    const app = await start({ connection: target.connection, keyPrefix }, [W]);
    const take = jest.spyOn(app.app.get(DelayQueueStore), 'take');
    const producer = await start({ connection: target.connection, keyPrefix, workers: false, types: { ahead: {} } });
    await producer.submit.submitMany('ahead', Array.from({ length: n }, (_, i) => ({ payload: i })));
    await waitFor(() => runs.size === n, { timeoutMs: 10_000 });
    await sleep(100);
    const asked = take.mock.calls.map(([, options]) => options.count);
    // half the slots per take (two in flight) before any handler finished; after, half of the slots and
    // three times as many ahead: 8 at concurrency 4, never more
    expect(Math.max(...asked)).toBe(8);
    expect(maxRunning).toBeLessThanOrEqual(4);
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
  });

  it('reports states: delayed, ready, running, done, unknown', async () => {
    const keyPrefix = uniquePrefix('state');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const W = workerClass('state', {}, () => gate);
    const producer = await start({ connection: target.connection, keyPrefix, workers: false, types: { state: {} } });
    // NOTE: due 1 s on: a margin for the read below on a loaded machine
    await producer.submit.submit('state', {}, { id: 's1', delay: 1000 });
    expect(await producer.inspect.getState('state', 's1')).toBe('delayed');
    await waitFor(async () => (await producer.inspect.getState('state', 's1')) === 'ready', { timeoutMs: 3000 });
    await start({ connection: target.connection, keyPrefix }, [W]);
    await waitFor(async () => (await producer.inspect.getState('state', 's1')) === 'running', { timeoutMs: 2000 });
    release();
    await waitFor(async () => (await producer.inspect.getState('state', 's1')) === 'done', { timeoutMs: 2000 });
    expect(await producer.inspect.getState('state', 'nope')).toBe('unknown');
  });

  const clusterOnly = target.name === 'cluster' ? it : it.skip;
  clusterOnly('keeps the keys of one type in one hash slot and spreads types over the masters', async () => {
    const cluster = redis as Cluster;
    const slotOf = async (key: string) => Number(await cluster.call('CLUSTER', 'KEYSLOT', key));
    const ranges = (await cluster.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    const masterOf = (slot: number) => ranges.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
    const masters = new Set<number | undefined>();
    for (let i = 0; i < 12; i++) {
      const { events: _events, lane, requests, waitingChunk, ...keys } = keysOf('dq', `type-${i}`);
      const slots = new Set(await Promise.all([...Object.values(keys), lane('x.0'), requests('1790000123'), waitingChunk('B1f')].map(slotOf)));
      expect(slots.size).toBe(1);
      masters.add(masterOf([...slots][0]));
    }
    expect(masters.size).toBeGreaterThanOrEqual(2);
  });
});
