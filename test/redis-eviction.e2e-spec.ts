/**
 * Eviction and memory (issue 27, item 3): a Redis that can evict keys drops queued tasks without a word, so
 * start-up refuses it unless the application accepts the risk; at maxmemory (noeviction) calls reject with a
 * typed error and nothing is written; the health indicator and the metrics show the memory.
 *
 * Failure matrix (redis-servers of this file's own):
 * | server                                       | expected                                                          |
 * | maxmemory-policy allkeys-lru                  | start-up fails: RedisEvictionPolicyError naming node and policy; no key written |
 * | volatile-lru (evicts keys with a TTL: leases, remembered ticks) | refused the same way                   |
 * | allkeys-lru with allowEviction: true          | starts, one warning naming the policy                              |
 * | allkeys-lru with waitForRedis                 | starts; no part starts; health: startup down with the error       |
 * | INFO refused to the user (ACL)               | starts, one warning: the policy could not be read                  |
 * | noeviction at maxmemory                      | submit and ordered submit reject with RedisOutOfMemoryError, nothing written; health memory down; metrics show used >= max; once memory is freed, submits work |
 * | noeviction under maxmemory                   | health memory up with each server's bytes                          |
 * | noeviction at maxmemory at start-up, waitForRedis | health says start-up waits for memory; once freed every part starts (route queue, cron): ordered tasks run, no error, no "records gone" warning |
 * | noeviction at maxmemory while tasks run past their visibility timeout, 2 worker replicas | leases renewed past the limit: none runs twice |
 * | one master of a cluster at maxmemory, workers running | its types' submits reject with RedisOutOfMemoryError, nothing written; the other masters' types accept; every task runs once; nothing logged |
 * | noeviction at maxmemory for 8 s, workers of both engines, events and a cron running | one warning per connection refused, one line when writes are accepted again with the failed calls counted; nothing else logged; every task runs once, the cron runs again |
 * | bad option                                   | allowEviction: 'yes' is InvalidOptionsError naming it              |
 */
import { Injectable, Logger, type LoggerService } from '@nestjs/common';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import {
  DistributedQueueHealthIndicator, InvalidOptionsError, RedisEvictionPolicyError, RedisOutOfMemoryError,
} from 'nestjs-distributed-queue';
import { CapturingLogger } from './support/capturing-logger';
import { recordingCron } from './support/cron';
import { parseExposition } from './support/prometheus';
import { startQueueApp, workerClass, type QueueApp } from './support/queue-app';
import { startRedisCluster, startRedisServer, type RedisClusterHandle, type RedisServerHandle } from './support/redis-server';
import { routeTestOptions } from './support/route';
import { uniquePrefix } from './support/targets';
import { libraryAclRule, setAclUser } from './support/tls';
import { sleep, waitFor } from './support/wait';

class Warnings implements LoggerService {
  readonly lines: string[] = [];
  log(): void {}
  error(): void {}
  warn = (m: unknown) => void this.lines.push(String(m));
}

@Injectable()
class Noop {}

/**
 * Another application's keys (5 MB), then maxmemory set below what the server uses: every write that needs
 * memory is refused. (Filling up to maxmemory leaves it a little under: small writes still pass.) Returns the limit.
 */
async function overLimit(admin: Redis, tag = ''): Promise<number> {
  for (let i = 0; i < 5; i++) await admin.set(`${tag}junk:${i}`, 'x'.repeat(1024 * 1024));
  const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
  const limit = used - 3 * 1024 * 1024; // a margin: used_memory moves by a megabyte with client buffers
  await admin.config('SET', 'maxmemory', String(limit));
  return limit;
}

/** Deletes the keys of overLimit: the server is under its limit again. */
async function freeJunk(admin: Redis, tag = ''): Promise<void> {
  for (let i = 0; i < 5; i++) await admin.del(`${tag}junk:${i}`);
}

describe('eviction and memory', () => {
  const servers: RedisServerHandle[] = [];
  let app: QueueApp | undefined;
  const server = async (...extraArgs: string[]): Promise<RedisServerHandle> => {
    const s = await startRedisServer({ extraArgs });
    servers.push(s);
    return s;
  };
  afterEach(async () => {
    await app?.close();
    app = undefined;
    Logger.overrideLogger(['error']);
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.remove()));
  });

  const worker = workerClass('ev.t', {}, () => undefined);

  it.each(['allkeys-lru', 'volatile-lru', 'allkeys-random'])('refuses to start on a server with maxmemory-policy %s, naming it; writes nothing', async (policy) => {
    const s = await server('--maxmemory', '100mb', '--maxmemory-policy', policy);
    const error = await startQueueApp({ connection: s.url, keyPrefix: uniquePrefix('ev') }, [worker]).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(RedisEvictionPolicyError);
    expect(error).toMatchObject({ node: `127.0.0.1:${s.port}`, policy });
    expect((error as Error).message).toContain('allowEviction');
    const admin = new Redis(s.port, '127.0.0.1');
    expect(await admin.dbsize()).toBe(0);
    admin.disconnect();
  });

  it('starts with allowEviction: true, warning once that keys can be evicted', async () => {
    const s = await server('--maxmemory', '100mb', '--maxmemory-policy', 'allkeys-lru');
    const logger = new Warnings();
    Logger.overrideLogger(logger);
    app = await startQueueApp({ connection: s.url, keyPrefix: uniquePrefix('ev'), allowEviction: true }, [worker]);
    await app.submit.submit('ev.t', {});
    expect(logger.lines.filter((l) => /can evict keys/.test(l))).toEqual([expect.stringContaining('allkeys-lru')]);
  });

  it('with waitForRedis: starts, but no part starts; the health indicator says why', async () => {
    const s = await server('--maxmemory', '100mb', '--maxmemory-policy', 'allkeys-lru');
    const ran: string[] = [];
    app = await startQueueApp({ connection: s.url, keyPrefix: uniquePrefix('ev'), waitForRedis: true }, [
      workerClass('ev.w', { pollIntervalMs: 100 }, (t) => void ran.push(t.id)),
    ]);
    const health = app.app.get(DistributedQueueHealthIndicator);
    await waitFor(async () => /maxmemory-policy "allkeys-lru"/.test(String((await health.isHealthy())['distributed-queue'].startup?.message)), {
      timeoutMs: 10_000, message: 'the health indicator names the policy',
    });
    const detail = (await health.isHealthy())['distributed-queue'];
    expect(detail.status).toBe('down');
    expect(detail.startup).toMatchObject({ status: 'down', pending: expect.arrayContaining(['Redis server check']) });
  });

  it('a user not allowed INFO: starts, warning that the policy could not be read', async () => {
    const s = await server();
    const prefix = uniquePrefix('ev');
    // ioredis's ready check sends INFO too: without it the connection is ready all the same.
    await setAclUser([s.port], 'noinfo', 'pw', libraryAclRule(prefix).replace('+info', '-info'));
    const logger = new Warnings();
    Logger.overrideLogger(logger);
    app = await startQueueApp({ connection: `redis://noinfo:pw@127.0.0.1:${s.port}`, keyPrefix: prefix }, [worker]);
    expect(logger.lines.filter((l) => /could not read Redis's maxmemory-policy/.test(l))).toHaveLength(1);
    expect((await app.app.get(DistributedQueueHealthIndicator).isHealthy())['distributed-queue'].memory).toBeUndefined();
  });

  it('at maxmemory: submits reject with RedisOutOfMemoryError and write nothing; health and metrics show it; freed, submits work', async () => {
    const s = await server('--maxmemory', '20mb', '--maxmemory-policy', 'noeviction');
    const prefix = uniquePrefix('ev');
    const registry = new Registry();
    app = await startQueueApp({
      connection: s.url, keyPrefix: prefix, metrics: { registry, prefix: 'evm_' }, route: routeTestOptions(prefix, 'oom', 2),
    }, [workerClass('ev.t', { pollIntervalMs: 60_000 }, () => new Promise(() => undefined)), workerClass('ev.o', { ordered: true }, () => undefined), Noop]);
    await app.control.pause('ev.t');
    await app.submit.submit('ev.t', {}, { id: 'before' });
    const health = app.app.get(DistributedQueueHealthIndicator);
    expect((await health.isHealthy())['distributed-queue'].memory).toMatchObject({ status: 'up', servers: [{ policy: 'noeviction', maxBytes: 20 * 1024 * 1024 }] });

    // Another application's keys, then maxmemory set below what the server uses: every write is refused.
    // (Filling up to maxmemory leaves it a little under: small writes still pass.)
    const admin = new Redis(s.port, '127.0.0.1');
    const limit = await overLimit(admin);
    const before = await admin.dbsize();
    const submitted = await app.submit.submit('ev.t', { big: 'y'.repeat(100_000) }, { id: 'refused' }).then(() => undefined, (e: unknown) => e);
    expect(submitted).toBeInstanceOf(RedisOutOfMemoryError);
    expect((submitted as Error).message).toMatch(/out of memory .*nothing written/);
    const ordered = await app.submit.submitOrdered('ev.o', 'k', {}).then(() => undefined, (e: unknown) => e);
    expect(ordered).toBeInstanceOf(RedisOutOfMemoryError);
    expect(await admin.dbsize()).toBe(before);
    expect(await app.inspect.getState('ev.t', 'refused')).toBe('unknown');
    expect((await app.inspect.getCounts('ev.t')).ready).toBe(1);

    const memory = (await health.isHealthy())['distributed-queue'].memory!;
    expect(memory).toMatchObject({ status: 'down', message: expect.stringMatching(/out of memory/) });
    const gauges = parseExposition(await registry.metrics());
    const used = gauges.find((g) => g.name === 'evm_redis_memory_used_bytes')!.value;
    const max = gauges.find((g) => g.name === 'evm_redis_memory_max_bytes')!.value;
    expect([max, used >= max]).toEqual([limit, true]);

    await freeJunk(admin);
    admin.disconnect();
    await waitFor(() => app!.submit.submit('ev.t', {}, { id: 'after' }).then(() => true, () => false), { timeoutMs: 10_000, message: 'submits work again' });
    expect((await health.isHealthy())['distributed-queue'].memory).toMatchObject({ status: 'up' });
  });

  it('at maxmemory for 8 s under work: one warning per connection, one line back counting the failed calls, every task runs', async () => {
    const s = await server('--maxmemory', '200mb', '--maxmemory-policy', 'noeviction');
    const prefix = uniquePrefix('ev');
    const runs = new Map<string, number>();
    const count = (id: string): void => void runs.set(id, (runs.get(id) ?? 0) + 1);
    const cron = recordingCron(`${prefix}-cron`);
    app = await startQueueApp({
      connection: s.url, keyPrefix: prefix, redisTimeoutMs: 1000, route: routeTestOptions(prefix, 'oom', 2), keepDone: 100,
      defaults: { pollIntervalMs: 100, visibilityTimeoutMs: 2000 }, events: { stream: true },
    }, [
      workerClass('ev.t', { concurrency: 4 }, async (t) => void (count(t.id), await sleep(100))),
      workerClass('ev.o', { ordered: true }, (t) => count(t.id)),
      cron.Sweeper,
    ]);
    const logger = new CapturingLogger();
    Logger.overrideLogger(logger);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push(await app.submit.submit('ev.t', { i }, { id: `t${i}`, delay: 1000 + i * 250 }));
    const admin = new Redis(s.port, '127.0.0.1');
    await overLimit(admin);
    await sleep(8000);
    const during = logger.entries.splice(0);
    const refused = during.filter((e) => e.level === 'warn' && /^Redis at \S+ is out of memory/.test(e.message));
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused.map((e) => /\(connection (\S+)\)/.exec(e.message)?.[1])).size).toBe(refused.length);
    expect(during.filter((e) => !refused.includes(e))).toEqual([]);

    const cronRuns = cron.runs.length;
    await freeJunk(admin);
    admin.disconnect();
    for (let i = 0; i < 20; i++) ids.push((await app.submit.submitOrdered('ev.o', `k${i % 3}`, { i }, { id: `o${i}` })).id);
    await waitFor(() => ids.every((id) => runs.has(id)) && cron.runs.length > cronRuns, { timeoutMs: 20_000, message: 'every task runs, the cron again' });
    expect([...runs.values()].filter((n) => n !== 1)).toEqual([]);
    await waitFor(() => logger.entries.filter((e) => e.level === 'log' && /accepts writes again/.test(e.message)).length === refused.length, {
      timeoutMs: 10_000, message: 'one line back per connection',
    });
    const back = logger.entries.filter((e) => e.level === 'log' && /accepts writes again/.test(e.message));
    expect(back.some((e) => /\d+ call\(s\) of the library failed meanwhile/.test(e.message))).toBe(true);
    expect(logger.entries.filter((e) => e.level === 'warn' || e.level === 'error')).toEqual([]);
  }, 60_000);

  it('with waitForRedis, started at maxmemory: the parts start once memory is freed; ordered tasks and the cron run', async () => {
    const s = await server('--maxmemory', '200mb', '--maxmemory-policy', 'noeviction');
    const admin = new Redis(s.port, '127.0.0.1');
    await overLimit(admin);
    const prefix = uniquePrefix('ev');
    const ran: string[] = [];
    const cron = recordingCron(`${prefix}-cron`);
    const logger = new CapturingLogger();
    Logger.overrideLogger(logger);
    app = await startQueueApp({ connection: s.url, keyPrefix: prefix, waitForRedis: true, route: routeTestOptions(prefix, 'oom', 2) }, [
      workerClass('ev.t', { pollIntervalMs: 100 }, (t) => void ran.push(t.id)), workerClass('ev.o', { ordered: true }, (t) => void ran.push(t.id)), cron.Sweeper,
    ]);
    const health = app.app.get(DistributedQueueHealthIndicator);
    await waitFor(async () => /out of memory/.test(String((await health.isHealthy())['distributed-queue'].startup?.message)), {
      timeoutMs: 10_000, message: 'the health indicator says start-up waits for memory',
    });
    await sleep(2000);
    expect((await health.isHealthy())['distributed-queue'].startup).toMatchObject({ status: 'down', pending: expect.arrayContaining(['route queue']) });
    await freeJunk(admin);
    admin.disconnect();
    await waitFor(async () => (await health.isHealthy())['distributed-queue'].startup?.status === 'up', { timeoutMs: 15_000, message: 'every part started' });
    await app.submit.submit('ev.t', {}, { id: 'delayed-one' });
    await app.submit.submitOrdered('ev.o', 'k', {}, { id: 'ordered-one' });
    await waitFor(() => ran.length === 2 && cron.runs.length > 0, { timeoutMs: 10_000, message: 'both tasks and the cron run' });
    expect(logger.lines('error')).toEqual([]);
    expect(logger.lines('warn', /were gone from Redis/)).toEqual([]);
  }, 60_000);

  it('at maxmemory, running tasks keep their leases (renewals are allowed past the limit): none runs twice', async () => {
    const s = await server('--maxmemory', '200mb', '--maxmemory-policy', 'noeviction');
    const prefix = uniquePrefix('ev');
    const runs: string[] = [];
    // NOTE: a visibility timeout of 2 s, so that a renewal late by an event loop stall of a loaded machine does not
    // lose a lease; maxmemory lasts more than twice that.
    const options = { connection: s.url, keyPrefix: prefix, redisTimeoutMs: 1000, defaults: { pollIntervalMs: 100, visibilityTimeoutMs: 2000 } };
    const worker = workerClass('ev.long', { concurrency: 4 }, async (t) => void (runs.push(t.id), await sleep(7000)));
    app = await startQueueApp(options, [worker]);
    const other = await startQueueApp(options, [worker]);
    try {
      for (let i = 0; i < 4; i++) await app.submit.submit('ev.long', {}, { id: `long${i}` });
      await waitFor(() => runs.length === 4, { timeoutMs: 5000, message: 'the four run' });
      const admin = new Redis(s.port, '127.0.0.1');
      await overLimit(admin);
      await sleep(4500); // past the visibility timeout: a lease not renewed has expired
      await freeJunk(admin);
      admin.disconnect();
      await waitFor(async () => (await app!.inspect.getCounts('ev.long')).done === 4, { timeoutMs: 15_000, message: 'the four done' });
      expect(runs.sort()).toEqual(['long0', 'long1', 'long2', 'long3']);
    } finally {
      await other.close();
    }
  }, 60_000);

  it('at maxmemory, ordered tasks running past the partitions\' lease on two machines: none runs twice', async () => {
    const s = await server('--maxmemory', '200mb', '--maxmemory-policy', 'noeviction');
    const prefix = uniquePrefix('ev');
    const runs: string[] = [];
    const worker = workerClass('ev.olong', { ordered: true }, async (t) => void (runs.push(t.id), await sleep(5000)));
    const start = (machine: string) => startQueueApp({ connection: s.url, keyPrefix: prefix, redisTimeoutMs: 1000, route: routeTestOptions(prefix, machine, 4, 1500, 300) }, [worker]);
    app = await start('m1');
    const other = await start('m2');
    try {
      for (let i = 0; i < 4; i++) await app.submit.submitOrdered('ev.olong', `k${i}`, {}, { id: `olong${i}` });
      await waitFor(() => runs.length === 4, { timeoutMs: 10_000, message: 'the four run' });
      const admin = new Redis(s.port, '127.0.0.1');
      await overLimit(admin);
      await sleep(3000); // twice offlineMs: a machine whose heartbeats are refused could be taken for gone
      await freeJunk(admin);
      admin.disconnect();
      await waitFor(async () => (await app!.inspect.getCounts('ev.olong')).partitions?.every((p) => p.ready + p.running === 0), { timeoutMs: 20_000, message: 'the four done' });
      await sleep(1000);
      expect(runs.sort()).toEqual(['olong0', 'olong1', 'olong2', 'olong3']);
    } finally {
      await other.close();
    }
  }, 60_000);

  it('refuses allowEviction that is not a boolean, naming it', async () => {
    const error = await startQueueApp({ connection: 'redis://127.0.0.1:1', allowEviction: 'yes' as unknown as boolean }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as Error).message).toContain('allowEviction');
  });
});

describe('eviction and memory on a cluster', () => {
  let cluster: RedisClusterHandle;
  let app: QueueApp | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3 });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    Logger.overrideLogger(['error']);
    await cluster.stop();
  });

  it('one master at maxmemory: its types refuse submits (typed, nothing written), the others\' do not; every task runs once; nothing logged', async () => {
    const prefix = uniquePrefix('evc');
    const any = new Redis(cluster.nodes[0].port, '127.0.0.1');
    const ranges = (await any.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    const masterOf = async (type: string): Promise<number> => {
      const slot = Number(await any.call('CLUSTER', 'KEYSLOT', `${prefix}:${type}`));
      return ranges.find(([from, to]) => from <= slot && slot <= to)![2][1];
    };
    // A type on another master than ev.full's (the keys' hash tag is `{prefix:type}`).
    const port = await masterOf('ev.full');
    let other = '';
    for (let i = 0; !other; i++) if ((await masterOf(`ev.other${i}`)) !== port) other = `ev.other${i}`;
    any.disconnect();
    const runs = new Map<string, number>();
    const handler = async (t: { id: string }): Promise<void> => void (runs.set(t.id, (runs.get(t.id) ?? 0) + 1), await sleep(50));
    app = await startQueueApp({
      connection: { cluster: cluster.nodes }, keyPrefix: prefix, redisTimeoutMs: 1000, events: { stream: true },
      defaults: { pollIntervalMs: 100, visibilityTimeoutMs: 2000 },
    }, [workerClass('ev.full', { concurrency: 4 }, handler), workerClass(other, { concurrency: 4 }, handler)]);
    const logger = new CapturingLogger();
    Logger.overrideLogger(logger);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await app.submit.submit('ev.full', { i }, { id: `f${i}`, delay: 1000 + i * 200 }));
    const master = new Redis(port, '127.0.0.1');
    const tag = `{${prefix}:ev.full}`;
    await overLimit(master, tag);
    const refused = await app.submit.submit('ev.full', {}, { id: 'refused' }).then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(RedisOutOfMemoryError);
    expect(await app.inspect.getState('ev.full', 'refused')).toBe('unknown');
    for (let i = 0; i < 20; i++) ids.push(await app.submit.submit(other, { i }, { id: `o${i}` }));
    await sleep(4000);
    await freeJunk(master, tag);
    master.disconnect();
    await waitFor(() => ids.every((id) => runs.has(id)), { timeoutMs: 15_000, message: 'every task runs' });
    expect([...runs.values()].filter((n) => n !== 1)).toEqual([]);
    expect([...logger.lines('warn'), ...logger.lines('error')]).toEqual([]);
  }, 60_000);
});
