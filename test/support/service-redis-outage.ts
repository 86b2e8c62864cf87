import { startRedisServer, type RedisServerHandle } from './redis-server';
import { api, runs, startClient, startScheduler, type HttpChild } from './service-mode';
import type { RedisTarget } from './targets';
import { startTcpProxy, type TcpProxy } from './tcp-proxy';
import { sleep, waitFor } from './wait';

/** How Redis is taken away under a running scheduler, and brought back. */
export type Outage = 'killed' | 'paused' | 'black-holed' | 'restarted empty';

/** A redis-server of the test's own behind a TCP proxy (the scheduler and the instance connect to the proxy). */
export interface OutageRedis {
  server: RedisServerHandle;
  proxy: TcpProxy;
  target: RedisTarget;
}

export async function startOutageRedis(persistent: boolean): Promise<OutageRedis> {
  const server = await startRedisServer(persistent ? { appendonly: true } : { extraArgs: ['--save', '', '--appendonly', 'no'] });
  const proxy = await startTcpProxy({ port: server.port });
  return { server, proxy, target: { name: 'single', connection: `redis://127.0.0.1:${proxy.port}` } };
}

export async function stopOutageRedis(redis: OutageRedis | undefined): Promise<void> {
  if (!redis) return;
  redis.proxy.stall(false);
  if (redis.server.isRunning()) redis.server.kill('SIGCONT');
  await redis.proxy.close();
  await redis.server.remove();
}

/** Takes Redis away. */
export function takeAway(redis: OutageRedis, how: Outage): void {
  if (how === 'paused') redis.server.kill('SIGSTOP');
  else if (how === 'black-holed') redis.proxy.stall(true);
  else redis.server.kill('SIGKILL');
}

/** Brings Redis back: continued, the network back (no connection cut by the test), or started again (with its AOF or empty). */
export async function bringBack(redis: OutageRedis, how: Outage): Promise<void> {
  if (how === 'paused') redis.server.kill('SIGCONT');
  else if (how === 'black-holed') redis.proxy.stall(false);
  else await redis.server.restart();
}

const liveInstances = async (scheduler: HttpChild, app: string): Promise<string[]> =>
  ((await api(scheduler, 'GET', '/api/apps')).body.find((x: { app: string }) => x.app === app)?.instances ?? []).map((i: { id: string }) => i.id);

export const stateOf = async (scheduler: HttpChild, id: string): Promise<string> => (await api(scheduler, 'GET', `/api/tasks/job/${id}`)).body.state;

/** What an outage run saw. */
export interface OutageRun {
  scheduler: HttpChild;
  client: HttpChild;
  /** Task starts reported by the instance when Redis went away, and just before it came back. */
  startsAtOutage: number;
  startsBeforeBack: number;
}

/** Ids of the tasks an outage run submits before the outage, due during it. */
export const DUE_DURING = ['due0', 'due1', 'due2', 'due3'];

/**
 * A scheduler and one instance (service mode with Redis) on `redis`; task 'held' (2.5 s) is running and four
 * tasks are due in 2 s when Redis is taken away for `outageMs`; then it comes back, and the run waits until the
 * instance is registered again and a task 'after' is submitted through the scheduler's API.
 */
export async function runThroughOutage(redis: OutageRedis, prefix: string, how: Outage, outageMs = 6000): Promise<OutageRun> {
  const [scheduler, client] = await Promise.all([
    startScheduler(redis.target, prefix),
    startClient(redis.target, prefix, { app: 'shop', instance: 'shop-a', types: ['job'], workerOptions: { concurrency: 8, maxAttempts: 3 } }),
  ]);
  await waitFor(async () => (await liveInstances(scheduler, 'shop')).join() === 'shop-a', { timeoutMs: 15_000, message: 'instance live' });
  expect((await api(scheduler, 'POST', '/api/tasks', { type: 'job', id: 'held', payload: { holdMs: 2500 } })).status).toBe(201);
  await client.waitForMessage((m) => m.type === 'start' && m.id === 'held', 15_000);
  for (const id of DUE_DURING) expect((await api(scheduler, 'POST', '/api/tasks', { type: 'job', id, payload: {}, delay: 2000 })).status).toBe(201);

  takeAway(redis, how);
  const startsAtOutage = runs(client).length;
  await sleep(outageMs);
  const startsBeforeBack = runs(client).length;
  await bringBack(redis, how);

  // The instance's registration expired meanwhile (TTL 1.5 s); its heartbeats register it again.
  await waitFor(async () => (await liveInstances(scheduler, 'shop')).join() === 'shop-a', { timeoutMs: 30_000, message: 'instance registered again' });
  await waitFor(async () => (await api(scheduler, 'POST', '/api/tasks', { type: 'job', id: 'after', payload: {} })).status === 201, {
    timeoutMs: 15_000, message: 'the API submits again',
  });
  return { scheduler, client, startsAtOutage, startsBeforeBack };
}
