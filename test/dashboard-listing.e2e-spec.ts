import { randomUUID } from 'crypto';
import { Redis } from 'ioredis';
import { InvalidArgumentError, type TaskInfo } from 'nestjs-distributed-queue';
import { RouteControlStore } from 'nestjs-distributed-queue/route/route-control.store';
import { DelayQueueStore, type NewTask } from 'nestjs-distributed-queue/delay/delay-queue.store';
import { keysOf, redisNow, useQueueApps, type QueueApp } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { commandCalls } from './support/redis-stats';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { portsOf, readWithoutBlocking, whilePinging } from './support/pinger';

/**
 * Listings of any page never block Redis (issue item 4): every state of a delay type and of the route queue,
 * read at its last page while another connection PINGs, and pages by cursor that walk the chunked waiting set
 * in bounded steps. Failure matrix:
 *  - largest inputs: 200,000 waiting tasks (due times interleaved across all 1,563 chunks), 200,000 ready
 *    ones, dead letters, running tasks and a route partition of 200,000 items: the last page, with a
 *    concurrent PING from a second connection (a separate thread, so the test's own work cannot delay it);
 *    a quarter of these sizes on the cluster;
 *  - concurrent change: tasks taken between the pages of a walk (no task listed twice, order kept);
 *  - bad input: a malformed or foreign cursor, a cursor with an offset: typed InvalidArgumentError;
 *  - crash between writes / replicas / server down: not applicable (listings write nothing).
 */

const FULL = Number(process.env.DQ_LISTING_TASKS ?? 200_000);

/** Submits `n` tasks through the store, 1,000 per script call, 8 calls at a time. */
async function fill(store: DelayQueueStore, type: string, n: number, dueOf: (i: number) => number): Promise<void> {
  const calls: NewTask[][] = [];
  for (let i = 0; i < n; i += 1000) {
    calls.push(Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ id: `t${i + j}`, due: { at: dueOf(i + j) }, payload: '{"n":1}' })));
  }
  for (let i = 0; i < calls.length; i += 8) await Promise.all(calls.slice(i, i + 8).map((tasks) => store.submit(type, tasks, randomUUID())));
}

/** Sends `command key ...values` for items 0..n-1 (`valuesOf(i)`), 1,000 items per command, 20 commands at a time. */
async function bulk(client: Redis, command: string, key: string, valuesOf: (i: number) => (string | number)[], n: number): Promise<void> {
  for (let i = 0; i < n; i += 20_000) {
    const calls: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(n, i + 20_000); j += 1000) {
      const args: (string | number)[] = [];
      for (let m = j; m < Math.min(n, j + 1000); m++) args.push(...valuesOf(m));
      calls.push(client.call(command, key, ...args));
    }
    await Promise.all(calls);
  }
}

describe.each(getTargets().map((t) => [t.name, t] as const))('listings of deep pages on %s', (name, target) => {
  // NOTE: full size on the single server; on the cluster (the same scripts on one master: the cells check the
  // routing of the pages' calls) a quarter, to keep the suite within its budget.
  const N = name === 'cluster' ? FULL / 4 : FULL;
  const { start, redis } = useQueueApps(target);
  jest.setTimeout(240_000);

  async function appOf(label: string, route = false): Promise<{ app: QueueApp; store: DelayQueueStore; prefix: string }> {
    const prefix = uniquePrefix(label);
    const app = await start({
      connection: target.connection, keyPrefix: prefix, workers: false,
      types: route ? { o: { ordered: true }, w: {} } : { w: {} },
      ...(route ? { route: routeTestOptions('q', 'producer', 2) } : {}),
    });
    return { app, store: app.app.get(DelayQueueStore), prefix };
  }

  it(`reads the last page of ${N} delayed and of ${N} ready tasks while a concurrent PING stays fast`, async () => {
    const { app, store } = await appOf('deep-wait');
    const now = await redisNow(redis());
    // due times interleaved: every chunk of the waiting set spans the whole range (the worst case for a merge)
    const dueOf = (i: number): number => (i % 2 === 0 ? now - 1000 - ((i * 7919) % N) : now + 3_600_000 + ((i * 7919) % N));
    await fill(store, 'w', N, dueOf);
    expect(await app.inspect.getCounts('w')).toMatchObject({ delayed: N / 2, ready: N / 2 });

    for (const state of ['delayed', 'ready'] as const) {
      const lastDue = state === 'delayed' ? now + 3_600_000 + N - 1 : now - 1000 - 0;
      // the last page by cursor, as a deep page the dashboard holds open is read every 2 s, while a second
      // connection PINGs. Its cursor is the one the page before answers as `next`, `<state>.<due>.<seq>` of
      // that page's last task, computed here: the due times of a state are distinct (7919 is prime to N) and
      // task i has seq i + 1 (one connection submits in order). Walking the pages before it cost O(N² / 1000)
      // here (every chunk spans the range) and is what the 700-task cases check.
      const order = Array.from({ length: N }, (_, i) => i).filter((i) => (i % 2 === 0) === (state === 'ready')).sort((a, b) => dueOf(a) - dueOf(b));
      const before = order[order.length - 1001];
      const lastCursor = `${state}.${dueOf(before)}.${before + 1}`;
      const open = await readWithoutBlocking(target, () => app.inspect.listTaskPage('w', state, { cursor: lastCursor, limit: 1000 }));
      expect(open.result.tasks.map((t) => t.id)).toEqual(order.slice(-1000).map((i) => `t${i}`));
      expect(open.result.next).toBeNull();
      expect(open.result.tasks.at(-1)!.dueAt).toBe(lastDue);
      expect([state, 'last page by cursor', open.ok, open.pings, open.bound]).toEqual([state, 'last page by cursor', true, open.pings, open.bound]);

      // listTasks' offset: the tasks before the page are walked over in bounded steps (seconds of them)
      const walk = await readWithoutBlocking(target, () => app.inspect.listTasks('w', state, { offset: N / 2 - 50, limit: 50 }), 'p99');
      const last = walk.result;
      expect(last).toHaveLength(50);
      // the last 50 in (due, submission) order: the latest due times of the state
      const dues = last.map((t) => t.dueAt!);
      expect(dues).toEqual([...dues].sort((a, b) => a - b));
      expect(last.at(-1)!.dueAt).toBe(lastDue);
      expect([state, 'offset walk', walk.ok, walk.pings, walk.bound]).toEqual([state, 'offset walk', true, walk.pings, walk.bound]);
    }
  });

  /** Every page by cursor until `next` is null, concatenated. */
  async function allByCursor(app: QueueApp, type: string, state: 'ready' | 'delayed' | 'running' | 'dead', limit: number, between?: () => Promise<unknown>): Promise<TaskInfo[]> {
    const out: TaskInfo[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10_000; pages++) {
      const page = await app.inspect.listTaskPage(type, state, { cursor, limit });
      expect(page.tasks.length).toBeLessThanOrEqual(limit);
      out.push(...page.tasks);
      if (!page.next) return out;
      cursor = page.next;
      await between?.();
    }
    throw new Error('pages never ended');
  }

  it('pages waiting tasks by cursor in (due, submission) order across chunks, ties included, whatever the page size', async () => {
    const { app, store } = await appOf('cursor-order');
    const now = await redisNow(redis());
    // 700 tasks in 6 chunks, submitted one call after the other (seq = i + 1): due times repeat and interleave
    const dueOf = (i: number) => (i % 3 === 0 ? now - 10_000 + ((i * 7919) % 40) : now + 600_000 + ((i * 7919) % 40));
    const tasks: NewTask[] = Array.from({ length: 700 }, (_, i) => ({ id: `t${i}`, due: { at: dueOf(i) }, payload: JSON.stringify({ i }) }));
    for (let i = 0; i < 700; i += 100) await store.submit('w', tasks.slice(i, i + 100), randomUUID());
    const order = (ready: boolean) => tasks.map((t, i) => ({ id: t.id, i, due: dueOf(i) })).filter((t) => (t.due <= now) === ready)
      .sort((a, b) => a.due - b.due || a.i - b.i).map((t) => t.id);
    for (const [state, expected] of [['ready', order(true)], ['delayed', order(false)]] as const) {
      for (const limit of [1, 7, 50, 128, 1000]) expect([state, limit, (await allByCursor(app, 'w', state, limit)).map((t) => t.id)]).toEqual([state, limit, expected]);
      // the offset pages of listTasks are the same order
      expect((await app.inspect.listTasks('w', state, { offset: 130, limit: 60 })).map((t) => t.id)).toEqual(expected.slice(130, 190));
    }
    const first = await app.inspect.listTaskPage('w', 'delayed', { limit: 2 });
    expect(first.tasks.map((t) => [t.state, t.payload, t.dueAt])).toEqual([0, 1].map((n) => ['delayed', { i: Number(order(false)[n].slice(1)) }, dueOf(Number(order(false)[n].slice(1)))]));
  });

  it('a cursor walk while tasks are taken between pages lists no task twice and keeps due order', async () => {
    const { app, store } = await appOf('cursor-moving');
    const now = await redisNow(redis());
    await fill(store, 'w', 2000, (i) => now - 100_000 + ((i * 7919) % 2000) * 10);
    const take = () => store.take('w', { count: 30, leaseMs: 60_000, maxAttempts: 3, keepDone: 0, recoverLimit: 10 }, [], 'c1', randomUUID());
    const listed = await allByCursor(app, 'w', 'ready', 50, take);
    expect(new Set(listed.map((t) => t.id)).size).toBe(listed.length);
    const dues = listed.map((t) => t.dueAt!);
    expect(dues).toEqual([...dues].sort((a, b) => a - b));
    expect(listed.length).toBeGreaterThan(0);
  });

  it('refuses a cursor that is not one, or one of another state, with a typed error; running and dead pages go by offset', async () => {
    const { app, prefix } = await appOf('cursor-bad');
    const k = keysOf(prefix, 'w');
    await redis().zadd(k.dead, 1, 'd1', 2, 'd2', 3, 'd3');
    const { next } = await app.inspect.listTaskPage('w', 'dead', { limit: 2 });
    expect(next).toEqual(expect.any(String));
    expect((await app.inspect.listTaskPage('w', 'dead', { cursor: next!, limit: 2 })).tasks.map((t) => t.id)).toEqual(['d3']);
    expect((await allByCursor(app, 'w', 'dead', 1)).map((t) => t.id)).toEqual(['d1', 'd2', 'd3']);
    const delayedCursor = 'delayed.1700000000000.5';
    for (const [state, cursor] of [['ready', 'garbage'], ['ready', delayedCursor], ['dead', delayedCursor], ['delayed', next], ['delayed', 5], ['delayed', 'delayed.-1.5']] as const) {
      await expect(app.inspect.listTaskPage('w', state, { cursor: cursor as string })).rejects.toMatchObject({ constructor: InvalidArgumentError, argument: 'cursor' });
    }
    await expect(app.inspect.listTaskPage('w', 'ready', { limit: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(app.inspect.listTaskPage('w', 'nope' as never)).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('pages the route queue by cursor: delayed ones by due time, partitions by offset', async () => {
    const { app } = await appOf('cursor-route', true);
    const later = await app.submit.submitOrderedMany('o', Array.from({ length: 300 }, (_, n) => ({ key: `k${n % 7}`, payload: { n }, delay: 60_000 + ((n * 31) % 300) * 10 })));
    await app.submit.submitOrderedMany('o', Array.from({ length: 40 }, (_, n) => ({ key: `k${n % 7}`, payload: { n } })));
    const delayed = await allByCursor(app, 'o', 'delayed', 7);
    expect(delayed.map((t) => (t.payload as { n: number }).n)).toEqual(later.map((_, n) => n).sort((a, b) => (a * 31) % 300 - (b * 31) % 300));
    const ready = await allByCursor(app, 'o', 'ready', 6);
    expect(ready.map((t) => t.id)).toEqual((await app.inspect.listTasks('o', 'ready', { limit: 1000 })).map((t) => t.id));
    expect(ready).toHaveLength(40);
  });

  it(`reads the last page of ${N} dead and running tasks, and of a route partition holding ${N}, while a PING stays fast`, async () => {
    const { app, prefix } = await appOf('deep-other', true);
    const k = keysOf(prefix, 'w');
    await bulk(redis() as Redis, 'ZADD', k.dead, (i) => [i, `d${i}`], N);
    await bulk(redis() as Redis, 'ZADD', k.active, (i) => [9e12 + i, `r${i}`], N);
    const [one] = await app.submit.submitOrderedMany('o', [{ key: 'k', payload: { n: 0 } }]);
    const control = app.app.get(RouteControlStore);
    const partition = (await app.inspect.listTasks('o', 'ready'))[0].partition!;
    const list = control.keys.partition(partition).list;
    const item = (await redis().lrange(list, 0, 0))[0];
    await bulk(redis() as Redis, 'RPUSH', list, (i) => [item.replace(one.id, `o${i}`)], N);

    const reads: [string, () => Promise<TaskInfo[]>][] = [
      ['dead', () => app.inspect.listTasks('w', 'dead', { offset: N - 50, limit: 50 })],
      ['running', () => app.inspect.listTasks('w', 'running', { offset: N - 50, limit: 50 })],
      ['route ready', () => app.inspect.listTasks('o', 'ready', { offset: N + 1 - 50, limit: 50 })],
    ];
    for (const [label, read] of reads) {
      const { result, ok, pings, bound } = await readWithoutBlocking(target, read);
      expect([label, result.length]).toEqual([label, 50]);
      expect([label, ok, pings, bound]).toEqual([label, true, pings, bound]);
    }
  });

  it(`counts ${N} ready tasks (the total of every page and the overview) in bounded steps, not one script over every chunk`, async () => {
    const { app, store } = await appOf('deep-counts');
    const now = await redisNow(redis());
    await fill(store, 'w', N, (i) => now - 1000 - ((i * 7919) % N));
    const admins = portsOf(target).map((port) => new Redis(port, '127.0.0.1'));
    try {
      const calls = async () => {
        let zcount = 0;
        let scripts = 0;
        for (const admin of admins) {
          zcount += await commandCalls(admin, 'zcount');
          scripts += await commandCalls(admin, 'evalsha', 'eval');
        }
        return { zcount, scripts };
      };
      const before = await calls();
      expect(await app.inspect.getCounts('w')).toMatchObject({ ready: N, delayed: 0 });
      const after = await calls();
      const chunks = Math.ceil(N / 128);
      // one count per chunk holding ready tasks, at most 256 of them per script call
      expect(after.zcount - before.zcount).toBeGreaterThanOrEqual(chunks);
      expect(after.scripts - before.scripts).toBeGreaterThanOrEqual(Math.ceil(chunks / 256));
      const { pings, ok, bound } = await readWithoutBlocking(target, () => app.inspect.getCounts('w'));
      expect([ok, pings, bound]).toEqual([true, pings, bound]);
    } finally {
      admins.forEach((admin) => admin.disconnect());
    }
  });
});
