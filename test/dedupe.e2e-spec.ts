/**
 * Dedupe, throttle, debounce (issue 31, item 5): `dedupe: { key, ttlMs?, mode }` on submit (delay-queue types),
 * one script (dedupe-11.lua) deciding and adding in one step.
 *
 * Failure matrix (single server and cluster):
 * | cell | expected |
 * | --- | --- |
 * | drop: a task of the key waiting; running; done (no window) | the same id, dedupe 'dropped'; 'dropped'; a new task |
 * | a window (ttlMs): after the task ran, within it; after it | 'dropped'; a new task |
 * | extend | the window restarts: a submit after the first window's end but within the extension is dropped |
 * | replace: waiting; running | the handler runs once with the last payload; running: 'dropped', the payload kept |
 * | debounce: 8 submits 40 ms apart, delay 300 | one run, with the last payload, after the last submit's delay; a submit while it runs adds a new task |
 * | 3 processes x 30 concurrent submits of one key | exactly one task created, every answer names it, it runs once |
 * | memory: 2,000 keys whose tasks ended and windows passed | the sweep drops them as later dedupe submits come: the hash holds the active keys only |
 * | a repeated call (the same request id: a re-send) | the first reply, nothing written twice |
 * | bad input (key, ttlMs, mode, unknown field; extend without ttlMs; an ordered type) | InvalidSubmitOptionsError naming the option, nothing written |
 */
import { InvalidSubmitOptionsError, type Task } from 'nestjs-distributed-queue';
import { DelayQueueStore } from 'nestjs-distributed-queue/delay/delay-queue.store';
import { newRequestId } from 'nestjs-distributed-queue/runtime/request-id';
import { spawnChild } from './support/child';
import { keysOf, startQueueApp, useAppsAndChildren, useQueueApps, workerClass, type QueueApp } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

const runs: { id: string; payload: unknown; at: number }[] = [];
let hold: Promise<void> = Promise.resolve();

const Worker = workerClass<unknown>('dd', { concurrency: 4, pollIntervalMs: 100 }, async (task: Task<unknown>) => {
  runs.push({ id: task.id, payload: task.payload, at: Date.now() });
  await hold;
});

describe.each(getTargets().map((t) => [t.name, t] as const))('dedupe on %s', (_name, target) => {
  const apps = useAppsAndChildren();
  const { redis } = useQueueApps(target);
  afterEach(() => {
    runs.length = 0;
    hold = Promise.resolve();
  });

  async function start(prefix: string, workers: boolean): Promise<QueueApp> {
    const app = await startQueueApp({ connection: target.connection, keyPrefix: prefix, types: { dd: {} }, ...(workers ? {} : { workers: false }) }, workers ? [Worker] : []);
    apps.push(app);
    return app;
  }
  const one = async (app: QueueApp, payload: unknown, dedupe: object, extra: object = {}) => (await app.submit.submitMany('dd', [{ payload, dedupe, ...extra } as never]))[0];

  it('drop: a waiting or running task of the key stands; once it is done (no window) a new one is added', async () => {
    const prefix = uniquePrefix('dd-drop');
    const producer = await start(prefix, false);
    const first = await one(producer, 1, { key: 'k' }, { delay: 300 });
    expect(first.created).toBe(true);
    expect(await one(producer, 2, { key: 'k' })).toEqual({ id: first.id, created: false, dedupe: 'dropped' });
    expect(await producer.submit.submit('dd', 3, { dedupe: { key: 'k' } })).toBe(first.id);
    let release!: () => void;
    hold = new Promise((resolve) => (release = resolve));
    await start(prefix, true);
    await waitFor(() => runs.length === 1, { timeoutMs: 10_000 });
    expect(await one(producer, 4, { key: 'k' })).toEqual({ id: first.id, created: false, dedupe: 'dropped' });
    release();
    await waitFor(async () => (await producer.inspect.getState('dd', first.id)) === 'done', { timeoutMs: 10_000 });
    const next = await one(producer, 5, { key: 'k' });
    expect(next.created).toBe(true);
    expect(next.id).not.toBe(first.id);
    await waitFor(() => runs.length === 2, { timeoutMs: 10_000 });
    expect(runs.map((r) => r.payload)).toEqual([1, 5]);
  });

  it('a window: dropped within ttlMs after the task ran, a new task after it; extend restarts the window', async () => {
    const prefix = uniquePrefix('dd-window');
    const app = await start(prefix, true);
    const first = await one(app, 1, { key: 'w', ttlMs: 800 });
    await waitFor(async () => (await app.inspect.getState('dd', first.id)) === 'done', { timeoutMs: 10_000 });
    expect((await one(app, 2, { key: 'w', ttlMs: 800 })).dedupe).toBe('dropped');
    await sleep(900);
    expect((await one(app, 3, { key: 'w', ttlMs: 800 })).created).toBe(true);
    // extend: each submit within the window restarts it
    const t0 = await one(app, 10, { key: 'x', ttlMs: 600, mode: 'extend' });
    expect(t0.created).toBe(true);
    await sleep(400);
    expect((await one(app, 11, { key: 'x', ttlMs: 600, mode: 'extend' })).dedupe).toBe('extended');
    await sleep(400); // past the first window's end, within the extension
    expect((await one(app, 12, { key: 'x', ttlMs: 600, mode: 'extend' })).dedupe).toBe('extended');
    await sleep(700);
    expect((await one(app, 13, { key: 'x', ttlMs: 600, mode: 'extend' })).created).toBe(true);
  });

  it('replace: a waiting task takes the last payload; a running one keeps its own', async () => {
    const prefix = uniquePrefix('dd-replace');
    const producer = await start(prefix, false);
    const first = await one(producer, 'a', { key: 'r', mode: 'replace' }, { delay: 200, priority: 3 });
    for (const p of ['b', 'c']) expect((await one(producer, p, { key: 'r', mode: 'replace' })).dedupe).toBe('replaced');
    let release!: () => void;
    hold = new Promise((resolve) => (release = resolve));
    await start(prefix, true);
    await waitFor(() => runs.length === 1, { timeoutMs: 10_000 });
    expect(runs[0]).toMatchObject({ id: first.id, payload: 'c' });
    expect((await one(producer, 'd', { key: 'r', mode: 'replace' })).dedupe).toBe('dropped');
    release();
    await sleep(300);
    expect(runs.map((r) => r.payload)).toEqual(['c']);
  });

  it('debounce: a burst runs once, with its last payload, after the last submit\'s delay; a submit while it runs adds a new task', async () => {
    const prefix = uniquePrefix('dd-debounce');
    const app = await start(prefix, true);
    let last = 0;
    let firstId = '';
    for (let i = 0; i < 8; i++) {
      const r = await one(app, i, { key: 'd', mode: 'debounce' }, { delay: 300 });
      if (i === 0) firstId = r.id;
      else expect(r).toEqual({ id: firstId, created: false, dedupe: 'debounced' });
      last = Date.now();
      await sleep(40);
    }
    let release!: () => void;
    hold = new Promise((resolve) => (release = resolve));
    await waitFor(() => runs.length === 1, { timeoutMs: 10_000 });
    expect(runs[0]).toMatchObject({ id: firstId, payload: 7 });
    expect(runs[0].at - last).toBeGreaterThanOrEqual(250);
    const during = await one(app, 'after', { key: 'd', mode: 'debounce' }, { delay: 0 });
    expect(during.created).toBe(true);
    release();
    await waitFor(() => runs.length === 2, { timeoutMs: 10_000 });
    expect(runs[1]).toMatchObject({ id: during.id, payload: 'after' });
  });

  it('3 processes submitting one key at once: exactly one task stands, every answer names it, it runs once', async () => {
    const prefix = uniquePrefix('dd-race');
    const children = await Promise.all([0, 1, 2].map(async () => {
      const child = spawnChild('test/fixtures/dedupe-submitter.ts', { DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix });
      await child.waitForMessage((m) => m.type === 'ready', 60_000);
      return child;
    }));
    for (const child of children) child.send({ go: true, key: 'race', mode: 'drop', count: 30 });
    const answers = (await Promise.all(children.map((c) => c.waitForMessage((m) => m.type === 'results' || m.type === 'error', 30_000)))) as { results: { id: string; created: boolean }[] }[];
    const all = answers.flatMap((a) => a.results);
    expect(all).toHaveLength(90);
    expect(all.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(all.map((r) => r.id)).size).toBe(1);
    await start(prefix, true);
    await waitFor(() => runs.length === 1, { timeoutMs: 10_000 });
    await sleep(300);
    expect(runs).toHaveLength(1);
  }, 90_000);

  it('memory: keys whose tasks ended and windows passed are swept by later dedupe submits', async () => {
    const prefix = uniquePrefix('dd-sweep');
    const app = await start(prefix, true);
    const keys = keysOf(prefix, 'dd');
    for (let i = 0; i < 2000; i += 200) {
      await app.submit.submitMany('dd', Array.from({ length: 200 }, (_, j) => ({ payload: i + j, dedupe: { key: `k${i + j}`, ttlMs: 50 } })));
    }
    // (the sweep may have begun: a key is first looked at a second after its submit)
    expect(await redis().hlen(keys.dedupe)).toBeGreaterThan(0);
    await waitFor(() => runs.length === 2000, { timeoutMs: 30_000, message: 'all ran' });
    // Dedupe submits of one key go on: each sweeps up to 20 keys whose time came.
    let calls = 0;
    await waitFor(async () => {
      for (let i = 0; i < 20; i++) await one(app, calls++, { key: 'steady' });
      return (await redis().hlen(keys.dedupe)) <= 1;
    }, { timeoutMs: 20_000, message: 'the ended keys swept' });
    expect(await redis().zcard(keys.dedupeIndex)).toBeLessThanOrEqual(1);
  }, 60_000);

  it('a repeated call (the same request id) answers the first reply and writes nothing twice', async () => {
    const prefix = uniquePrefix('dd-repeat');
    const app = await start(prefix, false);
    const store = app.app.get(DelayQueueStore);
    const id = newRequestId();
    const task = { id: '', due: { delay: 60_000 }, payload: '1' };
    const first = await store.dedupe('dd', task, { key: 'z', mode: 'drop', ttlMs: 0 }, id);
    expect(first.outcome).toBe('created');
    expect(await store.dedupe('dd', task, { key: 'z', mode: 'drop', ttlMs: 0 }, id)).toEqual(first);
    expect((await app.inspect.getCounts('dd')).delayed).toBe(1);
  });

  it('refuses bad dedupe options and ordered types, naming the option, writing nothing', async () => {
    const prefix = uniquePrefix('dd-bad');
    const app = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, route: routeTestOptions(prefix, 'm1', 1), types: { dd: {}, 'dd.o': { ordered: true } } });
    apps.push(app);
    const cases: [unknown, string][] = [
      [null, 'dedupe'], ['k', 'dedupe'], [{}, 'dedupe.key'], [{ key: '' }, 'dedupe.key'], [{ key: 'x'.repeat(257) }, 'dedupe.key'],
      [{ key: 'k', ttlMs: -1 }, 'dedupe.ttlMs'], [{ key: 'k', ttlMs: 1.5 }, 'dedupe.ttlMs'], [{ key: 'k', mode: 'merge' }, 'dedupe.mode'],
      [{ key: 'k', mode: 'extend' }, 'dedupe.ttlMs'], [{ key: 'k', window: 5 }, 'dedupe.window'],
    ];
    for (const [dedupe, option] of cases) {
      const error = await app.submit.submit('dd', {}, { id: 'bad', dedupe: dedupe as never }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidSubmitOptionsError);
      expect(error).toMatchObject({ option });
    }
    expect(await app.inspect.getState('dd', 'bad')).toBe('unknown');
    expect(await redis().exists(keysOf(prefix, 'dd').dedupe)).toBe(0);
    expect(await app.submit.submitOrdered('dd.o', 'k', {}, { dedupe: { key: 'k' } } as never).catch((e: unknown) => e)).toBeInstanceOf(InvalidSubmitOptionsError);
  });
});
