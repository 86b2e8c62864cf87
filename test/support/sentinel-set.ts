import * as fs from 'fs';
import { Redis } from 'ioredis';
import * as path from 'path';
import { startDelayProxy, type DelayProxy } from './delay-proxy';
import { getFreePort, redisCommand, startRedisServer, type RedisServerHandle } from './redis-server';
import { startSentinels, type SentinelGroupOptions, type SentinelHandle } from './sentinel';
import type { QueueApp } from './queue-app';
import { sleep } from './wait';

/** A server of the set and the delaying proxy everyone reaches it through. */
export interface SetNode {
  server: RedisServerHandle;
  /** Its address for sentinels, clients and replicas (`replica-announce-port`): only replication is delayed. */
  proxy: DelayProxy;
}

export interface SentinelSet {
  nodes: SetNode[];
  sentinels: SentinelHandle[];
  /** The connection option of the set. */
  connection: { sentinels: { host: string; port: number }[]; name: string };
  /** The node the sentinels name as master now. */
  master(): Promise<SetNode>;
  /**
   * SIGKILLs the master, waits until the sentinels promoted the other node, then restarts the killed one
   * empty (its last sync's RDB deleted) as a replica of it, not promotable (replica-priority 0) until it is in
   * sync and every sentinel saw it promotable again. Returns the ms from the kill to the promotion.
   */
  failover(): Promise<number>;
  /** Waits until the replica is online and caught up with the master's offset. */
  inSync(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** True for the bytes of a replica's replication link (its handshake and acks). */
const replication = (chunk: Buffer): boolean => /REPLCONF|PSYNC/i.test(chunk.toString('latin1'));

/**
 * A Sentinel set of this test's own: 1 master, 1 replica, `sentinels` sentinels (quorum 2), each server
 * behind a proxy that delays its replication connections by `lagMs` each way (the replica lags the
 * master; clients and sentinels are not delayed). Servers announce their proxy, so after a failover
 * the old master, restarted, replicates through the new master's proxy and lags the same.
 */
export async function startSentinelSet(options: { lagMs: number; sentinels?: number } & SentinelGroupOptions): Promise<SentinelSet> {
  const nodes: SetNode[] = [];
  const sentinels: SentinelHandle[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(sentinels.splice(0).map((s) => s.stop()));
    await Promise.all(nodes.map(async (n) => {
      await n.server.remove();
      await n.proxy.close();
    }));
  };
  const info = async (node: SetNode): Promise<string> => (await redisCommand(node.server.port, ['INFO', 'replication']).catch(() => '')) ?? '';
  try {
    for (let n = 0; n < 2; n++) {
      const port = await getFreePort();
      const proxy = await startDelayProxy({ upstreamPort: port, delayMs: options.lagMs, delayWhen: replication });
      const extraArgs = [
        '--replica-announce-ip', '127.0.0.1', '--replica-announce-port', String(proxy.port), '--repl-diskless-sync-delay', '0',
        ...(n === 1 ? ['--replicaof', '127.0.0.1', String(nodes[0].proxy.port)] : []),
      ];
      nodes.push({ server: await startRedisServer({ port, extraArgs }), proxy });
    }
  /** Waits until every sentinel saw the replica at `port` promotable again (its priority refreshes by INFO). */
  const promotable = async (port: number, timeoutMs = 20_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const seen = await Promise.all(sentinels.map(async (s) => {
        const client = new Redis({ port: s.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        try {
          const replicas = (await client.call('SENTINEL', 'REPLICAS', 'mymaster')) as string[][];
          const replica = replicas.map((r) => Object.fromEntries(r.flatMap((v, i) => (i % 2 === 0 ? [[v, r[i + 1]]] : [])))).find((r) => r.port === String(port));
          return replica?.['slave-priority'] !== undefined && replica['slave-priority'] !== '0';
        } catch {
          return false;
        } finally {
          client.disconnect();
        }
      }));
      if (seen.every(Boolean)) return;
      if (Date.now() > deadline) throw new Error(`the sentinels did not see the replica on ${port} promotable within ${timeoutMs} ms`);
      await sleep(200);
    }
  };
  /** Each node's replication state and log tail, for a failure's message. */
  const describe = async (): Promise<string> => (await Promise.all(nodes.map(async (n) => (
    `--- node ${n.server.port} (proxy ${n.proxy.port}, ${n.server.isRunning() ? 'running' : 'down'}):\n${await info(n)}\n${n.server.logTail(25)}`
  )))).join('\n');
    const set: SentinelSet = {
      nodes,
      sentinels,
      connection: { sentinels: [], name: 'mymaster' },
      master: async () => {
        for (const node of nodes) if (node.server.isRunning() && /role:master/.test(await info(node))) return node;
        throw new Error('no master in the sentinel set');
      },
      inSync: async (timeoutMs = 20_000) => {
        const deadline = Date.now() + timeoutMs;
        // NOTE: under load the master's offset keeps moving: wait until the replica passed where it was.
        let target: number | undefined;
        for (;;) {
          const master = await set.master().catch(() => null);
          const text = master ? await info(master) : '';
          const offset = /master_repl_offset:(\d+)/.exec(text)?.[1];
          const replica = /slave0:.*state=online,offset=(\d+)/.exec(text)?.[1];
          if (offset && replica) {
            target ??= Number(offset);
            if (Number(replica) >= target) return;
          }
          if (Date.now() > deadline) throw new Error(`the replica did not catch up within ${timeoutMs} ms:\n${await describe()}`);
          await sleep(100);
        }
      },
      failover: async () => {
        const old = await set.master();
        const next = nodes.find((n) => n !== old)!;
        const killed = Date.now();
        old.server.kill('SIGKILL');
        let promoted = 0;
        for (;;) {
          const said: (number | null)[] = await Promise.all(sentinels.map(({ port }) => sentinelMasterPort(port)));
          // NOTE: all of them: a client asking one that lags would be sent to the killed one, restarted empty.
          if (said.every((p) => p === next.proxy.port) && /role:master/.test(await info(next))) {
            promoted = Date.now() - killed;
            break;
          }
          if (Date.now() - killed > 30_000) throw new Error('no failover within 30 s');
          await sleep(50);
        }
        // NOTE: restarted truly empty, as a replica from its first instant, and not promotable until in sync.
        // Before, it came back as a MASTER (node 0's arguments) with the RDB its last full sync had left in its
        // dir (a stale dataset, not an empty one), REPLICAOF came after; and while it synced, sentinels could
        // promote it: a replica that never connected reports master_link_down_since_seconds -1, which passes
        // their checks. The delaying proxies run in the test's process, so a stall of its event loop over
        // down-after (1 s) makes the sentinels fail over a healthy master: to that replica, whose stale data
        // then replaced the master's (generated ids handed out again, issue 27). That is Redis's own limit
        // (WAIT cannot keep a failover from electing a replica that did not get the write), not the library's.
        await fs.promises.rm(path.join(old.server.dir, 'dump.rdb'), { force: true });
        await old.server.restart(['--replicaof', '127.0.0.1', String(next.proxy.port), '--replica-priority', '0']);
        // NOTE: 4-5 s here; under a flat-out load sharing two cores with other suites it once passed 20 s (CI at
        // 55d7eeb, test b): the proxies carrying the resync run in the test's own busy process. The failure
        // message now holds each node's replication state and log tail.
        await set.inSync(45_000);
        await redisCommand(old.server.port, ['CONFIG', 'SET', 'replica-priority', '100']);
        await promotable(old.proxy.port);
        return promoted;
      },
      stop,
    };
    sentinels.push(...(await startSentinels(options.sentinels ?? 3, nodes[0].proxy.port, options, 1)));
    set.connection.sentinels = sentinels.map(({ port }) => ({ host: '127.0.0.1', port }));
    await set.inSync();
    return set;
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The master's port a sentinel names (`SENTINEL get-master-addr-by-name`), null when it cannot say. */
async function sentinelMasterPort(port: number): Promise<number | null> {
  // NOTE: a two-element array reply: read it with a raw socket (redisCommand reads only simple replies).
  const net = await import('net');
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let text = '';
    const done = (value: number | null): void => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(1000, () => done(null));
    socket.on('error', () => done(null));
    socket.on('connect', () => socket.write(['*3', ...['SENTINEL', 'get-master-addr-by-name', 'mymaster'].flatMap((a) => [`$${a.length}`, a]), ''].join('\r\n')));
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const match = /^\*2\r\n\$\d+\r\n[^\r]+\r\n\$\d+\r\n(\d+)\r\n/.exec(text);
      if (match) done(Number(match[1]));
      else if (text.startsWith('-') || text.startsWith('*-1')) done(null);
    });
  });
}

/**
 * Jest hooks for a suite on a Sentinel set of its own (`startSentinelSet(options)`, started before the
 * suite, stopped after it): `set` is the set, and the apps pushed onto `apps` are closed after each test.
 */
export function useSentinelSet(options: Parameters<typeof startSentinelSet>[0]): { readonly set: SentinelSet; apps: QueueApp[] } {
  let set: SentinelSet | undefined;
  const apps: QueueApp[] = [];
  beforeAll(async () => {
    set = await startSentinelSet(options);
  }, 60_000);
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });
  afterAll(async () => {
    await set?.stop();
  });
  return {
    apps,
    get set(): SentinelSet {
      if (!set) throw new Error('useSentinelSet: the set is available inside tests only');
      return set;
    },
  };
}
