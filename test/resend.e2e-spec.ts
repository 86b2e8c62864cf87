import { createHash } from 'crypto';
import { Redis } from 'ioredis';
import type { RedisConnection, Task } from 'nestjs-distributed-queue';
import { loadScripts } from 'nestjs-distributed-queue/redis/script-loader';
import { useStartedApps, workerClass } from './support/queue-app';
import { HOST } from './support/redis-server';
import { ProxyRules, startTcpProxy, type DropRule, type ProxiedCommand, type TcpProxy } from './support/tcp-proxy';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

/*
 * "Re-sent commands are harmless": a proxy between the library and Redis lets a script run, withholds its
 * reply and drops the connection; ioredis reconnects and sends the script again. Nothing may happen twice.
 */

const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

/** A script's sha as ioredis sends it (EVALSHA), read at run time: the scripts change as the code does. */
function scriptSha(command: string): string {
  const script = loadScripts().find((s) => s.command === command);
  if (!script) throw new Error(`no Lua script for command ${command}`);
  return sha1(script.lua);
}

/** Matches a call of the script (EVALSHA, or its EVAL fallback); `argv` narrows on the arguments after the keys. */
function scriptCall(command: string, argv?: (args: string[]) => boolean): (c: ProxiedCommand) => boolean {
  const sha = scriptSha(command);
  return ({ args }) => {
    const name = args[0]?.toLowerCase();
    if (!((name === 'evalsha' && args[1] === sha) || (name === 'eval' && sha1(args[1] ?? '') === sha))) return false;
    return !argv || argv(args.slice(3 + Number(args[2])));
  };
}

/** Proxies in front of the target: one for a single server, one per master (natMap) for a cluster. */
async function proxyTarget(target: RedisTarget): Promise<{ connection: RedisConnection; rules: ProxyRules; proxies: TcpProxy[] }> {
  const rules = new ProxyRules();
  if (typeof target.connection === 'string') {
    const proxy = await startTcpProxy({ port: Number(new URL(target.connection).port) }, rules);
    return { connection: `redis://${HOST}:${proxy.port}`, rules, proxies: [proxy] };
  }
  const nodes = target.connection.cluster as { host: string; port: number }[];
  const proxies = await Promise.all(nodes.map((node) => startTcpProxy(node, rules)));
  const natMap = Object.fromEntries(nodes.map((n, i) => [`${n.host}:${n.port}`, { host: HOST, port: proxies[i].port }]));
  return { connection: { cluster: proxies.map((p) => ({ host: p.host, port: p.port })), clusterOptions: { natMap } }, rules, proxies };
}

/** Waits until the rule fired: a test whose reply was never dropped would prove nothing. */
async function fired(rule: DropRule, what: string): Promise<ProxiedCommand> {
  await waitFor(() => rule.fired, { timeoutMs: 10_000, message: `no reply of ${what} was dropped` });
  return rule.dropped;
}

/** Runs per id, each as its attempt number. */
class Runs {
  readonly byId = new Map<string, number[]>();
  add(id: string, attempt: number): void {
    this.byId.set(id, [...(this.byId.get(id) ?? []), attempt]);
  }
  get total(): number {
    return [...this.byId.values()].reduce((n, a) => n + a.length, 0);
  }
  /** Ids that ran more than once, with their attempts. */
  repeated(): Record<string, number[]> {
    return Object.fromEntries([...this.byId].filter(([, a]) => a.length > 1));
  }
}

describe('tcp proxy', () => {
  const target = getTargets().find((t) => t.name === 'single');
  (target ? it : it.skip)('forwards, cuts, and drops the reply of a matching command, which ioredis re-sends', async () => {
    const proxy = await startTcpProxy({ port: Number(new URL(target!.connection as string).port) });
    const client = new Redis({ host: HOST, port: proxy.port, maxRetriesPerRequest: 5 });
    const key = `${uniquePrefix('proxy')}:counter`;
    try {
      expect(await client.set(key, '0', 'EX', 60)).toBe('OK');
      expect(proxy.connections).toBe(1);
      proxy.cut();
      expect(await client.get(key)).toBe('0');
      const rule = proxy.dropReply(key);
      const [first, second] = await Promise.all([client.incr(key), client.incr(key)]);
      expect((await rule.dropped).args).toEqual(['incr', key]);
      // Both INCRs came in one packet: neither reply reached the client, both were re-sent and ran twice.
      expect([first, second]).toEqual([3, 4]);
      expect(await client.get(key)).toBe('4');
      const error = proxy.dropReply(key);
      await expect(client.hget(key, 'f')).rejects.toThrow(/WRONGTYPE/); // error replies pass, the rule stays
      expect(error.fired).toBe(false);
      error.cancel();
      expect(await client.incr(key)).toBe(5);
    } finally {
      client.disconnect();
      await proxy.close();
    }
  });
});

describe.each(getTargets().map((t) => [t.name, t] as const))('re-sent scripts on %s', (_name, target) => {
  let proxied: Awaited<ReturnType<typeof proxyTarget>>;
  // NOTE: declared first, so that its apps close before the proxies do.
  const start = useStartedApps();
  beforeEach(async () => {
    proxied = await proxyTarget(target);
  });
  afterEach(async () => {
    await Promise.all(proxied.proxies.map((p) => p.close()));
  });

  it('submitMany with generated ids creates and runs each task once', async () => {
    const keyPrefix = uniquePrefix('resend-submit');
    const runs = new Runs();
    const W = workerClass('rs.submit', { concurrency: 8 }, (task: Task) => runs.add(task.id, task.attempt));
    const app = await start({ connection: proxied.connection, keyPrefix }, [W]);
    const rule = proxied.rules.dropReply(scriptCall('dqDelaySubmit'));
    const n = 40;
    const results = await app.submit.submitMany('rs.submit', Array.from({ length: n }, (_, i) => ({ payload: { i } })));
    await fired(rule, 'dqDelaySubmit');
    expect(new Set(results.map((r) => r.id)).size).toBe(n);
    await waitFor(() => runs.total >= n, { timeoutMs: 10_000, message: `${n} runs` });
    await sleep(1000);
    expect({ ids: runs.byId.size, runs: runs.total }).toEqual({ ids: n, runs: n });
    expect([...runs.byId.keys()].sort()).toEqual(results.map((r) => r.id).sort());
  });

  /**
   * Starts a worker through the proxy whose first take that reserves something (ARGV[1] = count > 0) runs and
   * loses its reply; every one of the `n` tasks must run once, on its first attempt (`check` sees each).
   */
  async function expectEachRunOnceAfterALostTake(keyPrefix: string, type: string, n: number, check: (task: Task<any>) => void = () => undefined): Promise<void> {
    const rule = proxied.rules.dropReply(scriptCall('dqDelayTake', (argv) => Number(argv[0]) > 0));
    const runs = new Runs();
    const options = { concurrency: 4, visibilityTimeoutMs: 1500, pollIntervalMs: 200, maxAttempts: 5 };
    const W = workerClass(type, options, async (task: Task) => {
      runs.add(task.id, task.attempt);
      check(task);
      await sleep(30);
    });
    await start({ connection: proxied.connection, keyPrefix }, [W]);
    await fired(rule, 'dqDelayTake');
    await waitFor(() => runs.byId.size === n, { timeoutMs: 10_000, message: `all ${n} tasks ran` });
    // An orphaned reservation shows up when its lease (1.5 s) expires: as a second run, on attempt 2.
    await sleep(2500);
    expect(runs.repeated()).toEqual({});
    expect([...runs.byId.values()].flat().filter((attempt) => attempt !== 1)).toEqual([]);
    expect(runs.total).toBe(n);
  }

  it("a worker's re-sent take reserves nothing twice: no task runs twice or on a second attempt", async () => {
    const keyPrefix = uniquePrefix('resend-take');
    const type = 'rs.take';
    const producer = await start({ connection: target.connection, keyPrefix, workers: false, types: { [type]: {} } });
    const n = 12;
    await producer.submit.submitMany(type, Array.from({ length: n }, (_, i) => ({ id: `t${i}`, payload: { i } })));
    await expectEachRunOnceAfterALostTake(keyPrefix, type, n);
  });

  it('a re-sent take that rewrites delayed tasks of priorities and groups as they fall due: each runs once, its payload whole', async () => {
    const keyPrefix = uniquePrefix('resend-prio');
    const type = 'rs.prio';
    const producer = await start({ connection: target.connection, keyPrefix, workers: false, types: { [type]: {} } });
    const n = 24;
    // short records while delayed (a priority mark, no group in the record); the take that finds them due moves
    // them into the turn queue or their group's queue and rewrites each record in its long form
    const big = 'é'.repeat(50_000);
    await producer.submit.submitMany(type, Array.from({ length: n }, (_, i) => ({
      id: `t${i}`, payload: { i, big }, priority: 1 + (i % 3), ...(i % 2 ? { group: `g${i % 4}` } : {}), delay: 300,
    })));
    await sleep(600);
    const broken: string[] = [];
    await expectEachRunOnceAfterALostTake(keyPrefix, type, n, (task: Task<{ i: number; big: string }>) => {
      if (task.payload.big !== big || task.id !== `t${task.payload.i}`) broken.push(task.id);
    });
    expect(broken).toEqual([]);
    expect(await producer.inspect.getCounts(type)).toMatchObject({ ready: 0, running: 0, delayed: 0, dead: 0 });
  });

  it('submitOrderedMany runs each item once, in order per key', async () => {
    const keyPrefix = uniquePrefix('resend-route');
    const route = { qId: 'rs', partitions: 4, heartbeatMs: 200, offlineMs: 1500, idleMs: 3000, rebalanceMs: 300 };
    const seen = new Map<string, number[]>();
    const W = workerClass('rs.ordered', { ordered: true }, (task: Task<{ key: string; i: number }>) => {
      const { key, i } = task.payload;
      seen.set(key, [...(seen.get(key) ?? []), i]);
    });
    const app = await start({ connection: proxied.connection, keyPrefix, route }, [W]);
    await waitFor(async () => (await app.inspect.getRouteStatus()).partitions.every((p) => p.owner), {
      timeoutMs: 10_000,
      message: 'partitions owned',
    });
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
    const perKey = 8;
    const items = Array.from({ length: perKey }, (_, i) => keys.map((key) => ({ key, payload: { key, i } }))).flat();
    const rule = proxied.rules.dropReply(scriptCall('dqRoutePush'));
    const results = await app.submit.submitOrderedMany('rs.ordered', items);
    await fired(rule, 'dqRoutePush');
    expect(results.every((r) => r.outcome === 'queued')).toBe(true);
    const total = (): number => [...seen.values()].reduce((n, a) => n + a.length, 0);
    await waitFor(() => total() >= items.length, { timeoutMs: 10_000, message: `${items.length} ordered runs` });
    await sleep(1000);
    // Per key, the items in the order they ran (a re-pushed batch shows as a second run of 0..7).
    const expected = Array.from({ length: perKey }, (_, i) => i).join(',');
    expect(Object.fromEntries(keys.map((k) => [k, seen.get(k)?.join(',')]))).toEqual(Object.fromEntries(keys.map((k) => [k, expected])));
  });

  it('redriveDead by limit re-drives exactly `limit` once', async () => {
    const keyPrefix = uniquePrefix('resend-redrive');
    const type = 'rs.dead';
    const W = workerClass(type, { maxAttempts: 1 }, () => {
      throw new Error('always');
    });
    const failing = await start({ connection: target.connection, keyPrefix }, [W]);
    const ids = Array.from({ length: 6 }, (_, i) => `d${i}`);
    await failing.submit.submitMany(type, ids.map((id) => ({ id, payload: {} })));
    await waitFor(async () => (await failing.inspect.listDead(type)).total === ids.length, { timeoutMs: 10_000 });
    await failing.close();

    const admin = await start({ connection: proxied.connection, keyPrefix, workers: false, types: { [type]: {} } });
    const rule = proxied.rules.dropReply(scriptCall('dqDelayDeadRedrive'));
    const redriven = await admin.inspect.redriveDead(type, [], 2);
    await fired(rule, 'dqDelayDeadRedrive');
    const states = await Promise.all(ids.map((id) => admin.inspect.getState(type, id)));
    const count = (state: string): number => states.filter((s) => s === state).length;
    expect({ dead: count('dead'), ready: count('ready') }).toEqual({ dead: ids.length - 2, ready: 2 });
    // The caller learns what its (first) call did, not what the repeat found left to do.
    expect(redriven).toBe(2);
    expect(states.slice(0, 2)).toEqual(['ready', 'ready']); // the oldest two
  });
});
