import * as fs from 'fs';
import Redis, { Cluster } from 'ioredis';
import { killAllChildren, spawnChild } from './support/child';
import { RedisServerHandle, startRedisServer } from './support/redis-server';
import { getTargets, RedisTarget, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const targets = getTargets();

function connect(target: RedisTarget): Redis | Cluster {
  return typeof target.connection === 'string'
    ? new Redis(target.connection, { maxRetriesPerRequest: 3 })
    : new Cluster(target.connection.cluster, { redisOptions: { maxRetriesPerRequest: 3 } });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.each(targets.map((t) => [t.name, t] as const))('shared redis target: %s', (_name, target) => {
  let client: Redis | Cluster;
  beforeAll(() => {
    client = connect(target);
  });
  afterAll(() => client.disconnect());

  it('SET/GET under a unique prefix', async () => {
    const prefix = uniquePrefix('infra setget');
    expect(prefix).toMatch(/^t-infra-setget-[a-z0-9]{6}$/);
    await client.set(`${prefix}:k`, 'v', 'EX', 60);
    expect(await client.get(`${prefix}:k`)).toBe('v');
  });
});

const cluster = targets.find((t) => t.name === 'cluster');

(cluster ? describe : describe.skip)('shared redis cluster layout', () => {
  type SlotRange = [number, number, [string, number, ...unknown[]], ...unknown[]];
  const nodes = typeof cluster?.connection === 'object' ? cluster.connection.cluster : [];
  let client: Cluster;
  const direct = new Map<number, Redis>();
  beforeAll(() => {
    client = new Cluster(nodes);
    for (const n of nodes) direct.set(n.port, new Redis({ host: n.host, port: n.port, maxRetriesPerRequest: 1 }));
  });
  afterAll(() => {
    client.disconnect();
    for (const r of direct.values()) r.disconnect();
  });

  it('keys with different hash tags land on different masters', async () => {
    const slots = (await client.cluster('SLOTS')) as unknown as SlotRange[];
    const ownerOf = (slot: number): number => {
      const range = slots.find(([start, end]) => slot >= start && slot <= end);
      if (!range) throw new Error(`slot ${slot} not covered`);
      return range[2][1];
    };
    const prefix = uniquePrefix('layout');
    const keyByMaster = new Map<number, string>();
    for (let i = 0; i < 200 && keyByMaster.size < nodes.length; i++) {
      const key = `{${prefix}-${i}}:k`;
      const slot = await client.cluster('KEYSLOT', key);
      const owner = ownerOf(slot);
      if (!keyByMaster.has(owner)) keyByMaster.set(owner, key);
    }
    expect([...keyByMaster.keys()].sort()).toEqual(nodes.map((n) => n.port).sort());

    for (const [port, key] of keyByMaster) {
      await client.set(key, String(port), 'EX', 60);
      expect(await direct.get(port)!.get(key)).toBe(String(port)); // stored on its own master
      const other = nodes.find((n) => n.port !== port)!.port;
      await expect(direct.get(other)!.get(key)).rejects.toThrow(/MOVED/);
    }
  });
});

describe('startRedisServer', () => {
  let server: RedisServerHandle | undefined;
  afterAll(() => server?.remove());

  it('restart() and a SIGKILL + restart() keep appendonly data', async () => {
    server = await startRedisServer({ appendonly: true });
    const srv = server;
    const firstPid = srv.pid;
    let client = new Redis(srv.url, { maxRetriesPerRequest: 1 });
    await client.set('a', '1');
    client.disconnect();

    await srv.restart();
    expect(srv.pid).not.toBe(firstPid);
    expect(isAlive(firstPid)).toBe(false);
    client = new Redis(srv.url, { maxRetriesPerRequest: 1 });
    expect(await client.get('a')).toBe('1');
    await client.set('b', '2');
    client.disconnect();

    const secondPid = srv.pid;
    srv.kill('SIGKILL');
    await waitFor(() => !srv.isRunning(), { timeoutMs: 5000, message: 'redis did not die on SIGKILL' });
    await srv.restart();
    expect(srv.pid).not.toBe(secondPid);
    client = new Redis(srv.url, { maxRetriesPerRequest: 1 });
    expect(await client.mget('a', 'b')).toEqual(['1', '2']);
    client.disconnect();

    await srv.stop();
    await srv.stop(); // idempotent
    expect(isAlive(srv.pid)).toBe(false);
    await srv.remove();
    expect(fs.existsSync(srv.dir)).toBe(false);
  });
});

describe('spawnChild', () => {
  afterAll(() => killAllChildren());

  it('talks over IPC and reports SIGKILL', async () => {
    const child = spawnChild('test/fixtures/echo-child.ts');
    const ready = await child.waitForMessage((m) => m?.type === 'ready', 30_000);
    expect(ready.pid).toBe(child.pid);
    // already-received messages satisfy later waits too
    await expect(child.waitForMessage((m) => m?.type === 'ready', 100)).resolves.toEqual(ready);

    child.send({ hello: 'world' });
    const echo = await child.waitForMessage((m) => m?.type === 'echo');
    expect(echo.payload).toEqual({ hello: 'world' });
    expect(child.messages.map((m) => m.type)).toEqual(['ready', 'echo']);
    expect(child.output()).toContain('ready');

    const pending = child.waitForMessage((m) => m?.type === 'never', 30_000);
    child.kill('SIGKILL');
    await expect(child.exited).resolves.toEqual({ code: null, signal: 'SIGKILL' });
    await expect(pending).rejects.toThrow(/exited .*SIGKILL/);
    expect(isAlive(child.pid)).toBe(false);
  });
});
