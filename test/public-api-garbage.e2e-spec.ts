/**
 * Every public method of the injectable services, called with bad input of every kind: an async method never
 * throws (it returns a promise, which settles in bounded time) and what it rejects with is one of the library's
 * typed errors, never a TypeError of its own code ("cannot read properties of undefined"). A sweep over the
 * public methods found in the services' sources, so a method added later is swept too.
 *
 * | cell                                             | expected                                                  |
 * |--------------------------------------------------|-----------------------------------------------------------|
 * | each public method × 35 argument lists (none,     | no synchronous throw from a method that returns promises; |
 * | undefined, null, numbers, NaN, objects, arrays,   | every rejection a DistributedQueueError; every call       |
 * | bad type names, cyclic objects, 1,001 ids)        | settled within 6 s (submitAndWait waits by design)        |
 * | the same in the testing module (and TestQueue)    | the same                                                  |
 * | a refused call on Redis                           | nothing written: every key of the delay type, the route queue's partitions and its delayed ordered tasks as they were (DUMP) |
 * | each option of each call's options, each payload  | typed; valid calls still work after the sweep             |
 * | JSON cannot hold; every method after close        |                                                           |
 * | every method with good arguments, Redis paused    | settles within 1 s + 2.5 s, typed (RedisUnavailableError) |
 * | (SIGSTOP)                                         | or answered; calls work again after SIGCONT               |
 */
import 'reflect-metadata';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import * as fs from 'fs';
import * as path from 'path';
import {
  DistributedQueueError, DistributedQueueHealthIndicator, QueueControlService, TaskFlowService, TaskGroupsService, TaskHistoryService,
  TaskInspectorService, TaskScheduleService, TaskSubmitService,
} from 'nestjs-distributed-queue';
import { DistributedQueueTestingModule, TestQueue } from 'nestjs-distributed-queue/testing';
import { REPO_ROOT } from './support/child';
import { PG_URL, useSchemaNames } from './support/pg';
import { keysOf, startQueueApp, useQueueApps } from './support/queue-app';
import { Cluster, type Redis } from 'ioredis';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { waitFor } from './support/wait';

const SRC = path.join(REPO_ROOT, 'libs', 'distributed-queue', 'src');
const SERVICES: [new (...args: never[]) => object, string][] = [
  [TaskSubmitService, 'services/task-submit.service.ts'],
  [TaskInspectorService, 'services/task-inspector.service.ts'],
  [QueueControlService, 'services/queue-control.service.ts'],
  [TaskGroupsService, 'services/task-groups.service.ts'],
  [TaskFlowService, 'services/task-flow.service.ts'],
  [TaskScheduleService, 'cron/task-schedule.service.ts'],
  [TaskHistoryService, 'history/task-history.service.ts'],
  [DistributedQueueHealthIndicator, 'health/distributed-queue.health.ts'],
];

/** The public methods a class's source declares (not private, protected, static, accessors, @internal or Nest's hooks). */
function publicMethods(file: string): string[] {
  const source = fs.readFileSync(path.join(SRC, file), 'utf8');
  const hooks = /^(constructor|on[A-Z]\w*|before[A-Z]\w*)$/;
  const names: string[] = [];
  for (const m of source.matchAll(/(\/\*\*(?:(?!\*\/)[\s\S])*\*\/\s*)?^ {2}(?:async\s+)?([a-zA-Z]\w*)\s*(?:<[^(]*>)?\(/gm)) {
    const [, doc, name] = m;
    if (hooks.test(name) || ['if', 'for', 'while', 'switch', 'return', 'catch'].includes(name) || doc?.includes('@internal')) continue;
    names.push(name);
  }
  return [...new Set(names)];
}

/** The testing module's assertions: they throw an AssertionError by design (a failed expectation). */
const ASSERTIONS = ['TestQueue.expectSubmitted', 'TestQueue.expectNotSubmitted'];

/** Methods that wait by design (a bad argument still rejects at once; a good one waits for its task). */
const WAITING = ['TaskSubmitService.submitAndWait'];

const cyclic: Record<string, unknown> = { a: 1 };
cyclic.self = cyclic;
// NOTE: undefined sorts into the lists as a missing argument; the defaults then apply
const ARGS: unknown[][] = [
  [], [undefined], [null], [42], [NaN], [{}], [[]], ['bad{type'], ['fz'], ['fz', undefined], ['fz', null], ['fz', -1], ['fz', NaN],
  ['fz', {}], ['fz', []], ['fz', 'x'.repeat(2000)], ['fz', cyclic], ['fz', 'id', null], ['fz', 'id', -5], ['fz', 'id', { bogus: 1 }],
  ['fz', 'id', { delay: -1, priority: 1.5, group: '', limit: 0, offset: -1 }], ['fz', { payload: cyclic }, { id: '' }], [{ type: 'fz' }, 'id'], ['fo', 'k', 'x', 'y'],
  ['fz', [], 0], ['fz', [], -5], ['fz', [], 1e9], ['fz', ['a'], 5, null], ['fz', ['a'], 5, 42], ['fz', 'x', 'y', 42],
  ['fz', Array.from({ length: 1001 }, (_, i) => `i${i}`)], [0, 1000], [-1, 5], [1.5, 'x'],
];

/** An argument, shortly. */
function show(arg: unknown): string {
  if (typeof arg === 'string') return JSON.stringify(arg.length > 12 ? `${arg.slice(0, 12)}…` : arg);
  try {
    return JSON.stringify(arg) ?? String(arg);
  } catch {
    return '<cyclic>';
  }
}

/** Bad values each option of a call's options object gets. */
const BAD_VALUES: unknown[] = [null, -1, 0, 1.5, NaN, Infinity, 1e15, '', 'x'.repeat(2000), true, {}, [], { bogus: 1 }, cyclic, () => 1];

/** Options a call takes that its unknown-option message does not list (checked elsewhere, or no such message). */
const UNLISTED: Record<string, string[]> = {
  submit: ['durability'], submitMany: ['durability'], submitAndWait: ['timeoutMs', 'signal', 'durability'], reschedule: ['delay', 'runAt', 'durability'],
  submitFlow: ['durability'], listTaskPage: ['cursor', 'limit'], listTasks: ['offset', 'limit'],
};

/** The options a call knows, from the message its unknown option `zzzz` gets ("(known: a, b)"). */
async function knownOptions(call: (options: Record<string, unknown>) => Promise<unknown>): Promise<string[]> {
  const error = await call({ zzzz: 1 }).then(() => undefined, (e: unknown) => e as Error);
  const listed = error && /known: ([^)]*)\)/.exec(error.message);
  return listed ? listed[1].split(', ') : [];
}

/**
 * Each option of each call's options object set to each bad value: the call resolves or rejects with a typed
 * error, never an untyped one; returns the untyped ones.
 */
async function sweepOptions(app: INestApplicationContext): Promise<string[]> {
  const submit = app.get(TaskSubmitService);
  const flows = app.get(TaskFlowService);
  const inspect = app.get(TaskInspectorService);
  const schedules = app.get(TaskScheduleService);
  const calls: [string, (options: Record<string, unknown>) => Promise<unknown>][] = [
    ['submit', (o) => submit.submit('fz', { n: 1 }, o as never)],
    ['submitMany', (o) => submit.submitMany('fz', [{ payload: 1, ...o }] as never)],
    ['submitOrdered', (o) => submit.submitOrdered('fo', 'k', 1, o as never)],
    ['submitAndWait', (o) => submit.submitAndWait('fz', 1, { timeoutMs: 50, ...o } as never)],
    ['reschedule', (o) => submit.reschedule('fz', 'x', o as never)],
    ['submitFlow node', (o) => flows.submitFlow([{ ref: 'a', type: 'fz', payload: 1, ...o }] as never)],
    ['submitFlow', (o) => flows.submitFlow([{ ref: 'a', type: 'fz', payload: 1 }], o as never)],
    ['listTaskPage', (o) => inspect.listTaskPage('fz', 'ready', o as never)],
    ['listTasks', (o) => inspect.listTasks('fz', 'ready', o as never)],
    ['schedule upsert', (o) => schedules.upsert('s1', { type: 'fz', everyMs: 60_000, payload: 1, ...o } as never)],
  ];
  const untyped: string[] = [];
  for (const [name, call] of calls) {
    const keys = [...(await knownOptions(call)), ...(UNLISTED[name] ?? [])];
    expect({ name, keys: keys.length > 0 }).toEqual({ name, keys: true });
    for (const key of keys) {
      for (const value of BAD_VALUES) {
        // NOTE: a null timeoutMs is the default wait (30 s), not a bad value
        if (name === 'submitAndWait' && key === 'timeoutMs' && value === null) continue;
        const error = await call({ [key]: value }).then(() => undefined, (e: unknown) => e);
        if (error !== undefined && !(error instanceof DistributedQueueError)) untyped.push(`${name} { ${key}: ${show(value)} }: ${(error as Error)?.name}: ${(error as Error)?.message}`);
      }
    }
  }
  return untyped;
}

/** Payloads of every kind that JSON cannot hold, or only barely. */
function badPayloads(): [string, unknown][] {
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = [deep];
  return [
    ['cyclic', cyclic], ['BigInt', BigInt(1)], ['Symbol', Symbol('p')], ['function', () => 1], ['undefined', undefined],
    ['a toJSON that throws', { toJSON: () => { throw new Error('toJSON'); } }], ['100,000 levels deep', deep],
    ['a getter that throws', Object.defineProperty({}, 'x', { enumerable: true, get: () => { throw new Error('get'); } })],
    ['over 1 MB', 'x'.repeat(1024 * 1024 + 1)],
  ];
}

/** Each bad payload given to each call that takes one: a typed rejection (or success), never an untyped one. */
async function sweepPayloads(app: INestApplicationContext): Promise<string[]> {
  const submit = app.get(TaskSubmitService);
  const flows = app.get(TaskFlowService);
  const calls: [string, (payload: unknown) => Promise<unknown>][] = [
    ['submit', (p) => submit.submit('fz', p)],
    ['submitMany', (p) => submit.submitMany('fz', [{ payload: p }])],
    ['submitOrdered', (p) => submit.submitOrdered('fo', 'k', p)],
    ['submitOrderedMany', (p) => submit.submitOrderedMany('fo', [{ key: 'k', payload: p }])],
    ['submitAndWait', (p) => submit.submitAndWait('fz', p, { timeoutMs: 50 })],
    ['submitFlow', (p) => flows.submitFlow([{ ref: 'a', type: 'fz', payload: p }])],
    ['schedule upsert', (p) => app.get(TaskScheduleService).upsert('s2', { type: 'fz', everyMs: 60_000, payload: p })],
  ];
  const untyped: string[] = [];
  for (const [name, call] of calls) {
    for (const [what, payload] of badPayloads()) {
      const error = await call(payload).then(() => undefined, (e: unknown) => e);
      if (error !== undefined && !(error instanceof DistributedQueueError)) untyped.push(`${name} of ${what}: ${(error as Error)?.name}: ${(error as Error)?.message?.slice(0, 120)}`);
    }
  }
  return untyped;
}

/** What a refused call must leave as it was: a digest of the keys of the type `fz` (its hash tag: one slot). */
type Snapshot = () => Promise<string>;

/**
 * The digest of every key of delay type `type` (DUMP of each, its waiting set's chunks included), but its event
 * stream, which the history writer trims on its own schedule.
 */
function typeSnapshot(client: Redis | Cluster, prefix: string, type: string): Snapshot {
  const k = keysOf(prefix, type);
  const fixed = [
    k.waiting, k.waitingCount, k.active, k.jobs, k.seq, k.running, k.dead, k.errors, k.done, k.results, k.dedupe, k.dedupeIndex, k.paused,
    k.limits, `${k.waiting}:q`, `${k.waiting}:gof`, `${k.waiting}:gb`, `${k.waiting}:gr`, `${k.waiting}:gq`, `${k.waiting}:pc`, `${k.waiting}:gset`,
  ];
  const lua = `local out = {}
    for _, key in ipairs(KEYS) do
      local v = redis.call('DUMP', key)
      out[#out + 1] = key .. '=' .. (v and redis.sha1hex(v) or '-')
    end
    for _, tag in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
      local v = redis.call('DUMP', KEYS[1] .. ':' .. tag)
      out[#out + 1] = tag .. '=' .. (v and redis.sha1hex(v) or '-')
    end
    return table.concat(out, ' ')`;
  return async () => String(await client.eval(lua, fixed.length, ...fixed));
}

/**
 * The digest of the route queue `qId`'s partitions (each partition's waiting list, batch in flight and dead
 * letters, found on every master) and of its delayed ordered tasks (the delay type `__route__.<qId>`).
 */
function routeSnapshot(client: Redis | Cluster, prefix: string, qId: string): Snapshot {
  const delayed = typeSnapshot(client, prefix, `__route__.${qId}`);
  return async () => {
    const nodes = client instanceof Cluster ? client.nodes('master') : [client];
    const keys: string[] = [];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, found] = await node.scan(cursor, 'MATCH', `${prefix}:{${prefix}:${qId}:*`, 'COUNT', 1000);
        keys.push(...found.filter((key) => /:(q|inflight|dead)$/.test(key)));
        cursor = next;
      } while (cursor !== '0');
    }
    const dumps = await Promise.all(keys.sort().map(async (key) => `${key}=${(await client.dumpBuffer(key))?.toString('hex') ?? '-'}`));
    return `${dumps.join(' ')} ${await delayed()}`;
  };
}

/**
 * Calls every public method of every service of `app` with every argument list; returns the defects and the
 * calls still pending. With `snapshot`, a call that rejects must leave it as it was (nothing written).
 */
async function sweep(
  app: INestApplicationContext, services = SERVICES, usable = true, snapshot?: Snapshot, argLists = ARGS, boundMs = 6000,
): Promise<{ defects: string[]; pending: string[] }> {
  const defects: string[] = [];
  const pending: string[] = [];
  for (const [Service, file] of services) {
    const service = app.get(Service) as Record<string, (...args: unknown[]) => unknown>;
    const methods = publicMethods(file);
    expect({ file, methods: methods.length > 0 }).toEqual({ file, methods: true });
    for (const method of methods) {
      if (typeof service[method] !== 'function' || ASSERTIONS.includes(`${Service.name}.${method}`)) continue;
      let returnedPromise = false;
      const syncThrows: string[] = [];
      for (const args of argLists) {
        const label = `${Service.name}.${method}(${args.map(show).join(', ')})`;
        const before = await snapshot?.();
        let returned: unknown;
        try {
          returned = service[method](...args);
        } catch (error) {
          syncThrows.push(label);
          if (!(error instanceof DistributedQueueError)) defects.push(`${label} threw ${(error as Error)?.name}: ${(error as Error)?.message}`);
          continue;
        }
        if (!(returned instanceof Promise)) continue;
        returnedPromise = true;
        let timer: NodeJS.Timeout | undefined;
        const outcome = await Promise.race([
          returned.then(() => 'resolved', (error: unknown) => error),
          new Promise((resolve) => (timer = setTimeout(() => resolve('pending'), WAITING.includes(`${Service.name}.${method}`) ? 300 : boundMs))),
        ]).finally(() => clearTimeout(timer));
        if (outcome === 'pending') {
          if (!WAITING.includes(`${Service.name}.${method}`)) pending.push(label);
        } else if (outcome !== 'resolved' && !(outcome instanceof DistributedQueueError)) {
          defects.push(`${label} rejected with ${(outcome as Error)?.name}: ${(outcome as Error)?.message}`);
        } else if (outcome !== 'resolved' && snapshot && (await snapshot()) !== before) {
          defects.push(`${label} rejected with ${(outcome as Error).name} but wrote: ${(outcome as Error).message.slice(0, 100)}`);
        }
      }
      if (returnedPromise && syncThrows.length > 0) defects.push(`${Service.name}.${method} returns promises but threw synchronously: ${syncThrows[0]}`);
    }
  }
  if (!usable) return { defects, pending };
  // nothing a refused call did broke the engine: valid calls still work
  const submit = app.get(TaskSubmitService);
  for (const [name, check] of [
    ['submit', () => submit.submit('fz', 1)], ['submitOrdered', () => submit.submitOrdered('fo', 'k', 1)], ['getCounts', () => app.get(TaskInspectorService).getCounts('fz')],
  ] as const) {
    const error = await (check as () => Promise<unknown>)().then(() => undefined, (e: Error) => e);
    if (error) defects.push(`after the sweep, a valid ${name} failed: ${error.name}: ${error.message}`);
  }
  return { defects, pending };
}

const types = { fz: {}, fo: { ordered: true } };

describe.each(getTargets().map((t) => [t.name, t] as const))('public methods with bad input on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  const schemaName = useSchemaNames();

  it('every public method of every service rejects with typed errors, never throws', async () => {
    const keyPrefix = uniquePrefix('garbage');
    const app = await start({
      connection: target.connection, keyPrefix, workers: false, redisTimeoutMs: 2000, types, route: routeTestOptions(keyPrefix, 'solo', 2),
      history: { connection: PG_URL, schema: schemaName(), queryTimeoutMs: 2000 },
    });
    const delayType = typeSnapshot(redis(), keyPrefix, 'fz');
    const route = routeSnapshot(redis(), keyPrefix, keyPrefix);
    const snapshot: Snapshot = async () => `${await delayType()} ${await route()}`;
    // the digest sees a write of each kind (a test that cannot fail proves nothing)
    for (const write of [() => app.submit.submit('fz', 1, { delay: 60_000 }), () => app.submit.submitOrdered('fo', 'k', 1), () => app.submit.submitOrdered('fo', 'k', 2, { delay: 60_000 })]) {
      const before = await snapshot();
      await write();
      expect(await snapshot()).not.toEqual(before);
    }
    const { defects, pending } = await sweep(app.app, SERVICES, true, snapshot);
    expect(defects).toEqual([]);
    expect(pending).toEqual([]);
    expect(await sweepOptions(app.app)).toEqual([]);
    expect(await sweepPayloads(app.app)).toEqual([]);
  }, 600_000);
});

describe('public methods after the application closed', () => {
  const target = getTargets()[0];

  it('reject with typed errors in bounded time, never throw or hang', async () => {
    const keyPrefix = uniquePrefix('garbage-closed');
    const app = await startQueueApp({
      connection: target.connection, keyPrefix, workers: false, redisTimeoutMs: 2000, types, route: routeTestOptions(keyPrefix, 'solo', 2),
    });
    await app.close();
    const { defects, pending } = await sweep(app.app, SERVICES.filter(([Service]) => Service !== TaskHistoryService), false);
    expect(defects).toEqual([]);
    expect(pending).toEqual([]);
  }, 600_000);
});

describe('public methods while Redis is paused', () => {
  let server: RedisServerHandle;
  beforeAll(async () => {
    server = await startRedisServer({ extraArgs: ['--save', ''] });
  });
  afterAll(async () => {
    server.kill('SIGCONT');
    await server.remove();
  });

  it('every public method settles within the bound (redisTimeoutMs 1 s) with a typed error or its answer; all work again after', async () => {
    const keyPrefix = uniquePrefix('garbage-paused');
    const app = await startQueueApp({
      connection: `redis://127.0.0.1:${server.port}`, keyPrefix, workers: false, redisTimeoutMs: 1000, shutdownTimeoutMs: 200, types,
      route: routeTestOptions(keyPrefix, 'solo', 2),
    });
    try {
      await app.submit.submit('fz', 1, { id: 'id', delay: 60_000 });
      server.kill('SIGSTOP');
      // good arguments (bad ones are refused before any call): each call must reach Redis and give up in time
      const good: unknown[][] = [['fz'], ['fz', 'id'], ['fz', 'id', { delay: 1000 }], ['fz', ['id']], ['fo', 'k', 1], [['fz']], []];
      const { defects, pending } = await sweep(app.app, SERVICES.filter(([Service]) => Service !== TaskHistoryService), false, undefined, good, 3500);
      expect(defects).toEqual([]);
      expect(pending).toEqual([]);
      server.kill('SIGCONT');
      await waitFor(() => app.inspect.getCounts('fz').then(() => true, () => false), { timeoutMs: 10_000, message: 'calls work again' });
    } finally {
      server.kill('SIGCONT');
      await app.close();
    }
  }, 600_000);
});

describe('public methods with bad input in the testing module', () => {
  it('every public method of every service and of TestQueue rejects with typed errors, never throws', async () => {
    @Module({ imports: [DistributedQueueTestingModule.forRoot({ types, route: { qId: 'q', partitions: 2 } })] })
    class MemoryModule {}
    const app = await NestFactory.createApplicationContext(MemoryModule, { logger: ['error'], abortOnError: false });
    await app.init();
    try {
      const { defects, pending } = await sweep(app, [...SERVICES, [TestQueue, 'testing/test-queue.ts']]);
      expect(defects).toEqual([]);
      expect(pending).toEqual([]);
      expect(await sweepOptions(app)).toEqual([]);
      expect(await sweepPayloads(app)).toEqual([]);
    } finally {
      await app.close();
    }
  }, 600_000);
});
