import { randomUUID } from 'crypto';
import { DelayQueueStore, type NewTask } from 'nestjs-distributed-queue/delay/delay-queue.store';
import { keysOf, redisNow, useQueueApps } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';

/**
 * The waiting set kept in chunks of at most 128 tasks (scripts/includes/waiting-set.lua): order across
 * chunks, counts, pages, cancel and reschedule keeping the index right, and queues written by earlier
 * versions (one sorted set) moved over. Driven through the store, a call at a time.
 */
describe.each(getTargets().map((t) => [t.name, t] as const))('the chunked waiting set on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  const TYPE = 'ws';
  const TAKE = { leaseMs: 60_000, maxAttempts: 3, keepDone: 0, recoverLimit: 10 };

  async function storeOf(label: string): Promise<{ store: DelayQueueStore; keys: ReturnType<typeof keysOf> }> {
    const keyPrefix = uniquePrefix(label);
    const app = await start({ connection: target.connection, keyPrefix, workers: false, types: { [TYPE]: {} } });
    return { store: app.app.get(DelayQueueStore), keys: keysOf(keyPrefix, TYPE) };
  }

  /** Submits tasks `t0..t<n-1>` due at `dueOf(i)`, in calls of 100; returns the ids in (due, submission) order. */
  async function submitAll(store: DelayQueueStore, n: number, dueOf: (i: number) => number): Promise<string[]> {
    const tasks: NewTask[] = Array.from({ length: n }, (_, i) => ({ id: `t${i}`, due: { at: dueOf(i) }, payload: JSON.stringify({ i }) }));
    for (let i = 0; i < n; i += 100) await store.submit(TYPE, tasks.slice(i, i + 100), randomUUID());
    return tasks.map((t, i) => ({ id: t.id, due: dueOf(i), i })).sort((a, b) => a.due - b.due || a.i - b.i).map((t) => t.id);
  }

  /** Takes with the given counts in turn until a take returns nothing (bounded); returns the ids taken. */
  async function takeAll(store: DelayQueueStore, counts: number[]): Promise<string[]> {
    const taken: string[] = [];
    for (let call = 0; call < 2000; call++) {
      const { reserved } = await store.take(TYPE, { ...TAKE, count: counts[call % counts.length] }, [], 'c1', randomUUID());
      if (reserved.length === 0) return taken;
      taken.push(...reserved.map((r) => r.id));
    }
    throw new Error('takes never ran dry');
  }

  async function chunksLeft(keys: ReturnType<typeof keysOf>, tags: string[]): Promise<number[]> {
    return Promise.all(tags.map((tag) => redis().exists(keys.waitingChunk(tag))));
  }

  it('takes interleaved due times in (due, submission) order across chunks, whatever the batch size', async () => {
    const { store, keys } = await storeOf('ws-order');
    const base = (await redisNow(redis())) - 10_000;
    // 600 tasks over 5 chunks; due times repeat (ties) and interleave between chunks
    const expected = await submitAll(store, 600, (i) => base + ((i * 7919) % 50));
    expect(await redis().get(keys.waitingCount)).toBe('600');
    expect(await redis().zcard(keys.waiting)).toBe(5);

    const taken = await takeAll(store, [1, 7, 50, 128, 3]);
    expect(taken).toEqual(expected);
    expect(await redis().get(keys.waitingCount)).toBe('0');
    expect(await redis().exists(keys.waiting)).toBe(0);
    expect(await chunksLeft(keys, ['A0', 'A1', 'A2', 'A3', 'A4'])).toEqual([0, 0, 0, 0, 0]);
  });

  it('keeps each chunk a compact sorted set of at most 128 tasks', async () => {
    const { store, keys } = await storeOf('ws-compact');
    const base = await redisNow(redis());
    await submitAll(store, 300, (i) => base + 60_000 - i);
    const sizes = await Promise.all(['A0', 'A1', 'A2'].map((tag) => redis().zcard(keys.waitingChunk(tag))));
    expect(sizes).toEqual([127, 128, 45]); // seqs 1..127, 128..255, 256..300
    const encodings = await Promise.all(['A0', 'A1', 'A2'].map((tag) => redis().object('ENCODING', keys.waitingChunk(tag))));
    expect(encodings).toEqual(['listpack', 'listpack', 'listpack']);
    // the index holds each chunk's earliest due: the last task of each (due times fall with i)
    expect(await redis().zrange(keys.waiting, 0, -1, 'WITHSCORES')).toEqual(['A2', String(base + 60_000 - 299), 'A1', String(base + 60_000 - 254), 'A0', String(base + 60_000 - 126)]);
  });

  it('counts and pages ready and delayed tasks spread over every chunk', async () => {
    const { store } = await storeOf('ws-pages');
    const now = await redisNow(redis());
    // even tasks are due (in descending order), odd ones in a minute (ascending)
    const dueOf = (i: number) => (i % 2 === 0 ? now - 1000 - i : now + 60_000 + i);
    const expected = await submitAll(store, 600, dueOf);
    const ready = expected.slice(0, 300);
    const delayed = expected.slice(300);
    expect(await store.counts(TYPE)).toEqual({ delayed: 300, ready: 300, running: 0, dead: 0, done: 0 });
    expect((await store.list(TYPE, 'ready', 130, 20)).map((t) => t.id)).toEqual(ready.slice(130, 150));
    expect((await store.list(TYPE, 'delayed', 0, 10)).map((t) => t.id)).toEqual(delayed.slice(0, 10));
    expect((await store.list(TYPE, 'delayed', 250, 100)).map((t) => t.id)).toEqual(delayed.slice(250));
    const page = await store.list(TYPE, 'ready', 0, 2);
    expect(page.map((t) => t.due)).toEqual([dueOf(598), dueOf(596)]);

    const { reserved, nextDueIn } = await store.take(TYPE, { ...TAKE, count: 1000 }, [], 'c1', randomUUID());
    expect(reserved.map((r) => r.id)).toEqual(ready);
    expect(nextDueIn).toBeGreaterThan(55_000);
    expect(await store.counts(TYPE)).toEqual({ delayed: 300, ready: 0, running: 300, dead: 0, done: 0 });
  });

  it('cancel and reschedule keep every chunk’s earliest due time right', async () => {
    const { store, keys } = await storeOf('ws-edit');
    const now = await redisNow(redis());
    await submitAll(store, 300, (i) => now + 60_000 + i);
    expect(await store.cancel(TYPE, 't0')).toBe('cancelled');
    expect(await redis().zscore(keys.waiting, 'A0')).toBe(String(now + 60_001));
    // every task of the second chunk (seqs 128..255: t127..t254) cancelled: the chunk and its entry go
    for (let i = 127; i <= 254; i++) expect(await store.cancel(TYPE, `t${i}`)).toBe('cancelled');
    expect(await redis().zrange(keys.waiting, 0, -1)).toEqual(['A0', 'A2']);
    expect(await chunksLeft(keys, ['A1'])).toEqual([0]);
    // the first task of the first chunk moved later, the last task of the last chunk made due now
    expect(await store.reschedule(TYPE, 't1', { at: now + 120_000 })).toBe(now + 120_000);
    expect(await redis().zscore(keys.waiting, 'A0')).toBe(String(now + 60_002));
    expect(await store.reschedule(TYPE, 't299', { at: now - 1 })).toBe(now - 1);
    const { reserved } = await store.take(TYPE, { ...TAKE, count: 10 }, [], 'c1', randomUUID());
    expect(reserved.map((r) => r.id)).toEqual(['t299']);
    expect(await store.counts(TYPE)).toMatchObject({ delayed: 170, ready: 0, running: 1 });
    expect(await store.reschedule(TYPE, 't150', { delay: 0 })).toBeNull(); // cancelled: not waiting
  });

  it('moves a waiting set written by an earlier version (one sorted set) into chunks, losing nothing', async () => {
    const { store, keys } = await storeOf('ws-legacy');
    const base = (await redisNow(redis())) - 5000;
    const n = 1500; // more than one take moves (1000)
    const tag = (seq: number) => String.fromCharCode(64 + seq.toString(16).length) + seq.toString(16);
    const jobs: string[] = [];
    const members: (string | number)[] = [];
    for (let seq = 1; seq <= n; seq++) {
      jobs.push(`old${seq}`, `${tag(seq)}{"seq":${seq}}`);
      members.push(base + (seq % 10), `${tag(seq)}old${seq}`);
    }
    await redis().hset(keys.jobs, ...jobs);
    await redis().zadd(keys.legacyWaiting, ...members);
    await redis().set(keys.seq, n);

    const taken = await takeAll(store, [200]);
    expect(taken.length).toBe(n);
    expect(new Set(taken).size).toBe(n);
    expect(await redis().exists(keys.legacyWaiting)).toBe(0);
    expect(await redis().get(keys.waitingCount)).toBe('0');
    // a task submitted now takes the next seq and lands in the chunk after the moved ones
    await store.submit(TYPE, [{ id: 'new', due: { delay: 0 }, payload: '{}' }], randomUUID());
    expect(await redis().zrange(keys.waiting, 0, -1)).toEqual([tag(Math.floor((n + 1) / 128))]);
    expect(await takeAll(store, [10])).toEqual(['new']);
  });
});
