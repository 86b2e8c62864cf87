/**
 * What an idle route queue costs Redis: an empty partition's owner takes again after 1 s, then twice as long
 * each time it is still empty, up to 10 s (a push wakes it at once, and so does a reconnect); its lease is
 * renewed every heartbeat. Before, every empty partition took again every second: an idle fleet of 4,096
 * partitions made about 4,000 take calls (24,000 commands) a second, and a core of Node CPU.
 *
 * Failure matrix (a redis-server of this file's own, its command counts read with INFO commandstats):
 * | cell | expected |
 * | 32 idle partitions, 10 s measured after 25 s idle | at most 8 script calls a partition (4.5 measured: a take every 10 s, a renewal every heartbeat of 5 s, the rebalance's assignment every 10 s), against 13.5 before |
 * | a task pushed to a partition idle for 25 s | runs at once: the push's message wakes its owner (not its safety take) |
 * | a task pushed while the subscriber connection is cut (its wake-up lost), the partition idle for 25 s | runs within 3 s of the push: the reconnect wakes every runner (without it, up to the 10 s safety take) |
 */
import { Redis } from 'ioredis';
import { useStartedApps, workerClass } from './support/queue-app';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

/** EVALSHA and EVAL calls the server has run so far. */
async function scriptCalls(client: Redis): Promise<number> {
  const stats = await client.info('commandstats');
  return [...stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
}

describe('an idle route queue', () => {
  let server: RedisServerHandle;
  let client: Redis;
  const start = useStartedApps();
  beforeAll(async () => {
    server = await startRedisServer({ extraArgs: ['--save', ''] });
    client = new Redis(server.url);
  });
  afterAll(async () => {
    client.disconnect();
    await server.remove();
  });

  it('costs at most a few script calls a partition every 10 s, and a push still wakes its owner at once', async () => {
    const ran: number[] = [];
    const keyPrefix = uniquePrefix('route-idle');
    const partitions = 32;
    const app = await start({ connection: server.url, keyPrefix, route: { qId: keyPrefix, machineId: 'm1', partitions } }, [
      workerClass('idle', { ordered: true }, () => void ran.push(Date.now())),
    ]);
    await waitFor(async () => (await app.inspect.getRouteStatus()).partitions.every((p) => p.owner === 'm1'), { timeoutMs: 20_000, message: 'every partition owned' });
    await sleep(25_000);
    const before = await scriptCalls(client);
    await sleep(10_000);
    const calls = (await scriptCalls(client)) - before;
    // 144 measured (a take, two renewals and a rebalance's assignment a partition); 432 before
    expect(calls).toBeLessThanOrEqual(8 * partitions);

    const pushedAt = Date.now();
    await app.submit.submitOrdered('idle', 'k', {});
    await waitFor(() => ran.length === 1, { timeoutMs: 10_000, message: 'the task ran' });
    expect(ran[0] - pushedAt).toBeLessThan(2000);
  }, 90_000);

  it('a wake-up lost while the subscriber reconnects: the reconnect wakes every runner, the task runs at once', async () => {
    const ran: number[] = [];
    const keyPrefix = uniquePrefix('route-idle-lost');
    const app = await start({ connection: server.url, keyPrefix, route: { qId: keyPrefix, machineId: 'm1', partitions: 4 } }, [
      workerClass('idle', { ordered: true }, () => void ran.push(Date.now())),
    ]);
    await waitFor(async () => (await app.inspect.getRouteStatus()).partitions.every((p) => p.owner === 'm1'), { timeoutMs: 20_000, message: 'every partition owned' });
    await sleep(25_000);
    // the subscriber's connection cut, and the push sent before it is back: its wake-up goes to nobody
    const clients = String(await client.client('LIST'));
    const subscriber = /id=(\d+) .*name=\S*subscriber\S* /m.exec(clients.split('\n').filter((line) => line.includes(keyPrefix) && line.includes('subscriber')).join('\n'));
    expect(subscriber).not.toBeNull();
    const pushedAt = Date.now();
    await client.client('KILL', 'ID', subscriber![1]);
    await app.submit.submitOrdered('idle', 'k', {});
    await waitFor(() => ran.length === 1, { timeoutMs: 15_000, message: 'the task ran' });
    expect(ran[0] - pushedAt).toBeLessThan(3000);
  }, 90_000);
});
