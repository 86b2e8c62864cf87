import { Redis } from 'ioredis';
import { LuaScript } from 'nestjs-distributed-queue/redis/lua-script';
import { createRedisClient, closeRedisClient } from 'nestjs-distributed-queue/redis/redis-connection';
import type { RedisClient } from 'nestjs-distributed-queue/redis/script-loader';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { commandCalls, errorReplies } from './support/redis-stats';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const quiet = { log: () => undefined, warn: () => undefined, debug: () => undefined };

/** A script that writes its key and answers with what it got: KEYS[1], ARGV[1]. */
const ECHO = new LuaScript("redis.call('SET', KEYS[1], ARGV[1]) return { KEYS[1], ARGV[1] }", 1);

/** How many times the server answered NOSCRIPT (0 before the first). */
const noscriptErrors = (admin: Redis) => errorReplies(admin, 'NOSCRIPT');

describe('Lua scripts sent by the library, on a server of their own', () => {
  let server: RedisServerHandle;
  let client: RedisClient;
  let admin: Redis;
  beforeAll(async () => {
    server = await startRedisServer({ extraArgs: ['--save', ''] });
  });
  beforeEach(() => {
    client = createRedisClient(server.url, 'commands', 'lua-script-test', quiet);
    admin = new Redis(server.url);
  });
  afterEach(async () => {
    await closeRedisClient(client);
    admin.disconnect();
  });
  afterAll(() => server.remove());

  it("a connection's first call carries the body (no NOSCRIPT), later ones only the sha", async () => {
    await admin.script('FLUSH');
    const before = await noscriptErrors(admin);
    expect(await ECHO.run(client, ['k1', 'a'])).toEqual(['k1', 'a']);
    expect(await admin.script('EXISTS', ECHO.sha)).toEqual([1]);
    const evalCalls = () => commandCalls(admin, 'eval');
    const evals = await evalCalls();
    expect(await Promise.all([ECHO.run(client, ['k2', 'b']), ECHO.run(client, ['k3', 'c'])])).toEqual([['k2', 'b'], ['k3', 'c']]);
    expect(await evalCalls()).toBe(evals);
    expect(await noscriptErrors(admin)).toBe(before);
  });

  it('after SCRIPT FLUSH, calls in flight and later ones still run, each once, in call order', async () => {
    await ECHO.run(client, ['warm', 'x']);
    await admin.script('FLUSH');
    const before = await noscriptErrors(admin);
    const key = uniquePrefix('flush');
    const order = new LuaScript("return redis.call('RPUSH', KEYS[1], ARGV[1])", 1);
    await Promise.all(Array.from({ length: 20 }, (_, i) => order.run(client, [key, String(i)])));
    expect(await admin.lrange(key, 0, -1)).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
    expect(await ECHO.run(client, ['k4', 'd'])).toEqual(['k4', 'd']);
    // The first call of each script met NOSCRIPT: at most one per script and call in flight, then none.
    const after = await noscriptErrors(admin);
    expect(after).toBeGreaterThan(before);
    expect(await ECHO.run(client, ['k5', 'e'])).toEqual(['k5', 'e']);
    expect(await noscriptErrors(admin)).toBe(after);
  });

  it('after the server restarts (its script cache empty), the reconnected client sends the body first: no NOSCRIPT', async () => {
    expect(await ECHO.run(client, ['k6', 'f'])).toEqual(['k6', 'f']);
    admin.disconnect();
    await server.restart();
    admin = new Redis(server.url);
    await waitFor(async () => (await ECHO.run(client, ['k7', 'g']).catch(() => null)) !== null, { timeoutMs: 10_000, message: 'the client is back' });
    expect(await ECHO.run(client, ['k8', 'h'])).toEqual(['k8', 'h']);
    expect(await noscriptErrors(admin)).toBe(0);
  });

  it("applies the client's keyPrefix to the script's keys, not to its arguments", async () => {
    const prefixed = createRedisClient({ host: server.host, port: server.port, keyPrefix: 'pfx:' }, 'commands', 'lua-prefix', quiet);
    try {
      expect(await ECHO.run(prefixed, ['k9', 'arg'])).toEqual(['pfx:k9', 'arg']);
      expect(await admin.get('pfx:k9')).toBe('arg');
    } finally {
      await closeRedisClient(prefixed);
    }
  });

  it("keeps the scripts off ioredis's auto-pipelines (which copy every defined command), and a bad call rejects", async () => {
    const methods = client as unknown as Record<string, unknown>;
    expect(typeof methods.dqDelayTake).toBe('function');
    const pipeline = client.pipeline() as unknown as Record<string, unknown>;
    expect(pipeline.dqDelayTake).toBeUndefined();
    // The route runner's acks and take go through the auto-pipeline, in order: the only ones there.
    expect(Object.keys(client.scriptsSet).sort()).toEqual(['dqRouteAck', 'dqRouteTake']);
    const call = (methods.dqDelayTake as () => Promise<unknown>)();
    await expect(call).rejects.toThrow(/wrong number of arguments|Number of keys/i);
  });
});

describe.each(getTargets().map((t) => [t.name, t] as const))('Lua scripts on %s', (_name, target) => {
  it('run on the node of their first key', async () => {
    const client = createRedisClient(target.connection, 'commands', 'lua-route-test', quiet);
    try {
      const prefix = uniquePrefix('lua-route');
      // Keys spread over the slot space: on a cluster, every master gets some.
      const keys = Array.from({ length: 30 }, (_, i) => `{${prefix}:${i}}:k`);
      expect(await Promise.all(keys.map((k, i) => ECHO.run(client, [k, String(i)])))).toEqual(keys.map((k, i) => [k, String(i)]));
      for (const [i, k] of keys.entries()) expect(await client.get(k)).toBe(String(i));
    } finally {
      await closeRedisClient(client);
    }
  });
});
