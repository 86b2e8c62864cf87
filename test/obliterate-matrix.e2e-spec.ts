/**
 * The failure matrix of `obliterate` and of the pages of ready tasks over groups' queues (both of 2026-11-29),
 * against real Redis.
 *
 * | cell                                                    | expected                                           |
 * |---------------------------------------------------------|----------------------------------------------------|
 * | 100,000 groups with a queue each (25,000 on the cluster) | the first and the last page of ready tasks and the |
 * |                                                         | obliterate never block Redis (a concurrent PING    |
 * |                                                         | stays fast: its max for a page, its p99 for the    |
 * |                                                         | obliterate's walk; none of its calls over 50 ms in |
 * |                                                         | SLOWLOG); every key of the type goes               |
 * | SIGKILL right after each of the obliterate's calls      | the type is left in part; a later obliterate ends  |
 * | answered (every window, one crash each)                 | the work: every key goes, the type works again     |
 * | two admins obliterating at once                         | both resolve; every key goes                       |
 * | Redis paused (SIGSTOP) between two of its calls         | it rejects with RedisUnavailableError within the   |
 * |                                                         | bound; a page of ready tasks too; after SIGCONT a  |
 * |                                                         | later obliterate ends the work                     |
 */
import 'reflect-metadata';
import type { Cluster, Redis } from 'ioredis';
import { RedisUnavailableError, TaskGroupsService } from 'nestjs-distributed-queue';
import { DelayCleaningStore } from 'nestjs-distributed-queue/delay/delay-cleaning.store';
import { afterEachCall } from './support/after-calls';
import { slowestSince, slowlogMarks } from './support/slowlog';
import { spawnChild } from './support/child';
import { keysOf, keysOfType, startQueueApp, useQueueApps, type QueueApp } from './support/queue-app';
import { pingBound, readWithoutBlocking, whilePinging } from './support/pinger';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { reserveOne } from './support/reserve';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';

const EMPTY = { delayed: 0, ready: 0, running: 0, dead: 0, done: 0 };

/** Submits `tasks`, 5,000 a call, 4 calls at a time. */
async function submitAll(app: QueueApp, type: string, tasks: object[]): Promise<void> {
  const calls: Promise<unknown>[] = [];
  for (let i = 0; i < tasks.length; i += 5000) {
    calls.push(app.submit.submitMany(type, tasks.slice(i, i + 5000) as never));
    if (calls.length === 4) await Promise.all(calls.splice(0));
  }
  await Promise.all(calls);
}

/**
 * A type that uses every structure an obliterate deletes: due tasks in `groups` groups' queues (`g<i>`),
 * delayed tasks of other groups (the waiting set, the groups' backlog), prioritized tasks without a group (the
 * turn queue), delayed ones, group settings, a deduplicated task and a rate-limit override.
 */
async function fillType(app: QueueApp, type: string, groups: number): Promise<number> {
  const tasks = [
    ...Array.from({ length: groups }, (_, i) => ({ id: `t${i}`, payload: i, group: `g${i}` })),
    ...Array.from({ length: 1500 }, (_, i) => ({ id: `d${i}`, payload: i, group: `d${i % 700}`, delay: 60_000 + i })),
    ...Array.from({ length: 300 }, (_, i) => ({ id: `p${i}`, payload: i, priority: 1 + (i % 5) })),
    ...Array.from({ length: 200 }, (_, i) => ({ id: `w${i}`, payload: i, delay: 30_000 + i })),
    { id: 'once', payload: 0, delay: 60_000, dedupe: { key: 'k', ttlMs: 60_000 } },
  ];
  await submitAll(app, type, tasks);
  const settings = app.app.get(TaskGroupsService);
  await settings.setGroupConcurrency(type, 'g1', 2);
  await settings.setGroupWeight(type, 'd3', 5);
  await app.control.setRateLimit(type, { max: 1000, perMs: 1000 });
  return tasks.length;
}

/** The type's keys an obliterate leaves: none but the request keys (which expire) and the limits hash. */
async function leftBehind(client: Redis | Cluster, prefix: string, type: string): Promise<string[]> {
  const limits = keysOf(prefix, type).limits;
  return (await keysOfType(client, prefix, type)).filter((key) => !/:r[qb]:[^:]+$/.test(key) && key !== limits);
}

/** The type is gone: no key left, nothing counted, no group, no override; and it works again. */
async function expectObliterated(app: QueueApp, client: Redis | Cluster, prefix: string, type: string): Promise<void> {
  expect(await leftBehind(client, prefix, type)).toEqual([]);
  expect(await app.inspect.getCounts(type)).toEqual(EMPTY);
  expect((await app.app.get(TaskGroupsService).getGroups(type)).total).toBe(0);
  expect(await client.hexists(keysOf(prefix, type).limits, 'rl!')).toBe(0);
  await app.submit.submit(type, 'again', { id: 'again', group: 'g1' });
  expect(await reserveOne(app, type)).toEqual(['again']);
}

describe.each(getTargets().map((t) => [t.name, t] as const))('obliterate and pages over groups on %s', (name, target: RedisTarget) => {
  const { start, redis } = useQueueApps(target);
  const GROUPS = name === 'cluster' ? 25_000 : 100_000;

  it(`${GROUPS} groups: the last page of ready tasks and the obliterate never block Redis; every key goes`, async () => {
    for (let attempt = 1; ; attempt++) {
      const prefix = uniquePrefix('oblit-big');
      const app = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { ob: {} } });
      const total = await fillType(app, 'ob', GROUPS);
      expect((await app.inspect.getCounts('ob')).ready).toBe(GROUPS + 300);
      if (attempt === 1) {
        // the first page and the last (after the second-to-last group: the names sort as strings)
        const first = await readWithoutBlocking(target, () => app.inspect.listTaskPage('ob', 'ready', { limit: 100 }));
        expect(first.result.tasks.map((t) => t.id).slice(0, 3)).toEqual(['p0', 'p5', 'p10']);
        expect(first.ok).toBe(true);
        const names = Array.from({ length: GROUPS }, (_, i) => `g${i}`).sort();
        const cursor = `ready.g${Number.MAX_SAFE_INTEGER}.0.${Buffer.from(names[GROUPS - 2]).toString('base64url')}`;
        const last = await readWithoutBlocking(target, () => app.inspect.listTaskPage('ob', 'ready', { cursor, limit: 100 }));
        expect(last.result).toEqual({ tasks: [expect.objectContaining({ id: `t${names[GROUPS - 1].slice(1)}` })], next: null });
        expect(last.ok).toBe(true);
      }
      const bound = await pingBound(target);
      const marks = await slowlogMarks(redis());
      const { pings } = await whilePinging(target, () => app.control.obliterate('ob'));
      const slowest = await slowestSince(redis(), marks, prefix);
      await expectObliterated(app, redis(), prefix, 'ob');
      console.log(`[obliterate ${name}] ${total} tasks, ${GROUPS} groups: PING p99 ${pings.p99.toFixed(1)} max ${pings.max.toFixed(1)} ms (bound ${bound.toFixed(1)}), slowest call ${slowest} ms`);
      // NOTE: the p99 of the PINGs (a long walk of steps on a loaded, shared server meets a slow PING or two
      // whatever it does) and the slowest of its own calls as Redis timed them (SLOWLOG: over 10 ms) under 50 ms;
      // as readWithoutBlocking, up to three tries: a script that blocks Redis does so at every try
      if ((pings.p99 < bound && slowest < 50) || attempt === 3) {
        expect({ p99: pings.p99 < bound, slowest }).toEqual({ p99: true, slowest: expect.any(Number) });
        expect(slowest).toBeLessThan(50);
        return;
      }
    }
  }, 600_000);

  it('SIGKILL right after each of its calls answered: a later obliterate ends the work', async () => {
    const windows: string[] = [];
    // NOTE: on the cluster every third window (the same calls, routed to the type's master)
    for (let dieAfter = 1, step = name === 'cluster' ? 3 : 1; ; dieAfter += step) {
      const prefix = uniquePrefix('oblit-kill');
      const app = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { ok: {} } });
      await fillType(app, 'ok', 2500);
      const child = spawnChild('test/fixtures/obliterate-kill-app.ts', {
        DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: 'ok', DQ_DIE_AFTER: String(dieAfter),
      });
      const exit = await child.exited;
      const done = child.messages.find((m) => m.type === 'done');
      if (!done) {
        expect({ dieAfter, exit, output: child.output() }).toEqual({ dieAfter, exit: { code: null, signal: 'SIGKILL' }, output: expect.stringContaining(`DIE ${dieAfter}\n`) });
        windows.push(`${dieAfter}: ${(await leftBehind(redis(), prefix, 'ok')).length} keys`);
      }
      await app.control.obliterate('ok');
      await expectObliterated(app, redis(), prefix, 'ok');
      await app.close();
      if (done) {
        // every window had its crash: the calls of the whole obliterate (its presence check, its chunks' pages,
        // the groups' steps, the rest)
        expect(dieAfter).toBeGreaterThan(done.calls);
        expect(done.calls).toBeGreaterThan(10);
        console.log(`[obliterate ${name}] ${done.calls} calls; crashed after ${windows.join(', ')}`);
        return;
      }
    }
  }, 600_000);

  it('two admins at once (and a third as they go): each resolves, every key goes', async () => {
    const prefix = uniquePrefix('oblit-two');
    const admins = await Promise.all([1, 2, 3].map(() => start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { oc: {} } })));
    await fillType(admins[0], 'oc', 5000);
    await Promise.all([
      admins[0].control.obliterate('oc'),
      admins[1].control.obliterate('oc'),
      new Promise((resolve) => setTimeout(resolve, 5)).then(() => admins[2].control.obliterate('oc')),
    ]);
    await expectObliterated(admins[1], redis(), prefix, 'oc');
  }, 120_000);
});

describe('obliterate and pages over groups while Redis is paused', () => {
  let server: RedisServerHandle;
  beforeAll(async () => {
    server = await startRedisServer({ extraArgs: ['--save', ''] });
  });
  afterAll(() => server.remove());

  it('paused between two of its calls: rejects within the bound, typed; so does a page; a later obliterate ends the work', async () => {
    const prefix = uniquePrefix('oblit-pause');
    const connection = `redis://127.0.0.1:${server.port}`;
    const app = await startQueueApp({ connection, keyPrefix: prefix, workers: false, redisTimeoutMs: 1000, shutdownTimeoutMs: 200, types: { op: {} } });
    try {
      // NOTE: every third window: pausing takes the 1 s bound each time
      for (const pauseAfter of [2, 5, 8, 11, 14]) {
        await fillType(app, 'op', 3000);
        let paused = false;
        const store = app.app.get(DelayCleaningStore);
        const client = (store as unknown as { client: object }).client;
        afterEachCall(store, (n) => {
          if (n !== pauseAfter) return;
          server.kill('SIGSTOP');
          paused = true;
        });
        const t0 = performance.now();
        const error = await app.control.obliterate('op').then(() => undefined, (e: unknown) => e);
        const took = performance.now() - t0;
        (store as unknown as { client: object }).client = client;
        if (!paused) break;
        expect({ pauseAfter, error }).toEqual({ pauseAfter, error: expect.any(RedisUnavailableError) });
        expect(took).toBeLessThan(2500);
        // a page of ready tasks (the groups' queues among them) while paused: as bounded
        const page = performance.now();
        await expect(app.inspect.listTaskPage('op', 'ready', { limit: 10 })).rejects.toThrow(RedisUnavailableError);
        expect(performance.now() - page).toBeLessThan(2500);
        server.kill('SIGCONT');
        await app.control.obliterate('op');
        const inspect = await import('ioredis').then(({ Redis }) => new Redis(connection));
        try {
          await expectObliterated(app, inspect, prefix, 'op');
        } finally {
          inspect.disconnect();
        }
        await app.control.obliterate('op');
      }
    } finally {
      server.kill('SIGCONT');
      await app.close();
    }
  }, 180_000);
});
