/**
 * `waitForRedis`: the application starts without Redis, and the queues start once it answers (issue 26,
 * item 2: "or, where the user asks, starts and waits (health says why it is not ready)").
 *
 * Failure matrix (a redis-server of this file's own, started after the application, or stopped):
 * | Redis at start-up is…              | what is checked                                                          |
 * | not listening (connection refused) | start-up returns at once; health `startup` down naming the target, the connection error and every part not started; a submit rejects RedisUnavailableError within the bound; once the server is up: delay and ordered workers run, the cron method runs, fleet listeners hear events, health up |
 * | paused (SIGSTOP)                   | start-up returns at once; health down; after SIGCONT every part starts   |
 * | refusing the database (db 9 of 4)  | health shows the server's answer; nothing is written to DB 0; the queues start once a server with the database is there |
 * | up, with a part that cannot start (partitions shrunk) | health `startup` down naming the part and its error; the parts after it stay stopped; the application runs on |
 * | up (the option changes nothing)    | health up at once, workers run                                            |
 * | refused, with a history writer    | `history writer` pending; once Redis is up the task's outcome reaches PostgreSQL |
 * | refused, service mode (a scheduler and an application, both waiting) | once Redis is up the application registers, the scheduler delivers, the handler runs |
 * | refused, two instances waiting    | both start once it is up: both machines join the route queue and share its partitions; each cron tick runs once |
 * | a 3-master cluster, every node paused | start-up returns at once; health down; after SIGCONT every part starts |
 * | down, and the application stops   | `app.close()` within shutdownTimeoutMs + 2 s; no connection made after it (the server started after) |
 * | down, with the default (no option) | start-up fails with RedisStartupError (redis-down-calls checks the bound) |
 */
import { type INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import {
  DistributedQueueHealthIndicator, RedisStartupError, RedisUnavailableError, TaskHistoryService, TaskSubmitService,
  type CronRun, type DistributedQueueModuleOptions,
} from 'nestjs-distributed-queue';
import { PG_URL, useSchemaNames } from './support/pg';
import { startHttpQueueApp } from './support/service-mode';
import { fleetRecorder } from './support/fleet';
import { recordingCron } from './support/cron';
import { startQueueApp, workerClass, type QueueApp } from './support/queue-app';
import { getFreePort, HOST, startRedisCluster, startRedisServer, type RedisClusterHandle, type RedisServerHandle } from './support/redis-server';
import { routeTestOptions } from './support/route';
import { uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

const BOUND_MS = 1000;

interface Started {
  app: QueueApp;
  prefix: string;
  ran: string[];
  cronRuns: CronRun[];
  heard: { kind: string; taskId: string }[];
  health(): Promise<{ status: string; startup?: { status: string; message?: string; pending?: string[] } }>;
}

describe('waitForRedis: start without Redis, start the queues once it answers', () => {
  const apps: QueueApp[] = [];
  const servers: RedisServerHandle[] = [];
  const newSchema = useSchemaNames();
  afterEach(async () => {
    for (const s of servers) if (s.isRunning()) s.kill('SIGCONT');
    await Promise.all(apps.splice(0).map((a) => a.close()));
    await Promise.all(servers.splice(0).map((s) => s.remove()));
  });

  async function start(connection: DistributedQueueModuleOptions['connection'], extra: Partial<DistributedQueueModuleOptions> = {}): Promise<Started> {
    const prefix = extra.keyPrefix ?? uniquePrefix('wr');
    const ran: string[] = [];
    const cron = recordingCron(`${prefix}-sweep`);
    const fleet = fleetRecorder('wr.delay');
    const options: DistributedQueueModuleOptions = {
      connection, keyPrefix: prefix, waitForRedis: true, redisTimeoutMs: BOUND_MS, shutdownTimeoutMs: 500,
      route: routeTestOptions(prefix, 'solo', 2), events: { followIntervalMs: 100 }, ...extra,
    };
    const app = await startQueueApp(options, [
      workerClass('wr.delay', { pollIntervalMs: 200 }, (t) => void ran.push(t.id)),
      workerClass('wr.ordered', { ordered: true }, (t) => void ran.push(`ordered:${t.id}`)),
      cron.Sweeper, fleet.Recorder,
    ]);
    apps.push(app);
    const indicator = app.app.get(DistributedQueueHealthIndicator);
    return {
      app, prefix, ran, cronRuns: cron.runs,
      get heard() {
        return fleet.seen.map((e) => ({ kind: e.event, taskId: e.task.id }));
      },
      health: async () => (await indicator.isHealthy('q'))['q'] as never,
    };
  }

  /**
   * Every part works: the health is up, each kind of worker runs, the cron method runs, fleet listeners
   * hear (`others`: instances of the same queues, which may run the tasks instead).
   */
  async function expectEverythingRuns(s: Started, others: Started[] = []): Promise<void> {
    const all = [s, ...others];
    const ran = (): string[] => all.flatMap((i) => i.ran);
    await waitFor(async () => (await s.health()).status === 'up', { timeoutMs: 15_000, message: 'health up' });
    expect((await s.health()).startup).toEqual({ status: 'up' });
    await s.app.submit.submit('wr.delay', {}, { id: 'd1' });
    await s.app.submit.submitOrdered('wr.ordered', 'k', {}, { id: 'o1' });
    await waitFor(() => ran().includes('d1') && ran().some((r) => r.startsWith('ordered:')), { timeoutMs: 10_000, message: 'both workers ran' });
    await waitFor(() => all.some((i) => i.cronRuns.length > 0), { timeoutMs: 5000, message: 'the cron method ran' });
    await waitFor(() => s.heard.some((e) => e.kind === 'completed' && e.taskId === 'd1'), { timeoutMs: 5000, message: 'fleet listeners heard d1' });
  }

  it('refused connection: starts at once, health says why, calls are bounded; every part starts once Redis is up', async () => {
    const port = await getFreePort();
    const started = performance.now();
    const s = await start(`redis://${HOST}:${port}`);
    // NOTE: start-up does not wait (the default would have waited startupTimeoutMs, 10 s, then failed).
    expect(performance.now() - started).toBeLessThan(5000);
    const health = await s.health();
    expect(health.status).toBe('down');
    expect(health.startup?.status).toBe('down');
    expect(health.startup?.message).toContain(`waiting for Redis at ${HOST}:${port}`);
    await waitFor(async () => /ECONNREFUSED/.test((await s.health()).startup?.message ?? ''), { timeoutMs: 5000, message: 'the connection error shown' });
    expect(health.startup?.pending).toEqual(['Redis server check', 'event listeners', 'workers', 'route queue', 'distributed cron']);
    const error = await s.app.submit.submit('wr.delay', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisUnavailableError);

    servers.push(await startRedisServer({ port }));
    await expectEverythingRuns(s);
  }, 60_000);

  it('with a history writer: it starts once Redis is up, and outcomes reach PostgreSQL', async () => {
    const port = await getFreePort();
    const s = await start(`redis://${HOST}:${port}`, { history: { connection: PG_URL, schema: newSchema(), flushIntervalMs: 20 } });
    expect((await s.health()).startup?.pending).toContain('history writer');
    servers.push(await startRedisServer({ port }));
    await expectEverythingRuns(s);
    const history = s.app.app.get(TaskHistoryService);
    await waitFor(async () => {
      await history.flush();
      const { rows } = await history.searchHistory({ type: 'wr.delay', limit: 10 });
      return rows.some((row) => row.id === 'd1' && row.status === 'done');
    }, { timeoutMs: 10_000, intervalMs: 200, message: 'd1 done in the history' });
  }, 60_000);

  it('service mode: a scheduler and an application both waiting; once Redis is up the handler runs', async () => {
    const port = await getFreePort();
    const connection = `redis://${HOST}:${port}`;
    const keyPrefix = uniquePrefix('wr-svc');
    const secret = 'wait-service-secret-0123456789';
    const [schedulerPort, clientPort] = [await getFreePort(), await getFreePort()];
    const ran: string[] = [];
    const common = { connection, keyPrefix, waitForRedis: true, redisTimeoutMs: BOUND_MS, shutdownTimeoutMs: 500 };
    const http: INestApplication[] = [];
    try {
      http.push(await startHttpQueueApp({ ...common, mode: 'scheduler', scheduler: { secret, syncIntervalMs: 100 } }, [], schedulerPort));
      http.push(await startHttpQueueApp(
        { ...common, mode: 'service', service: { appName: 'wait-app', secret, publicUrl: `http://${HOST}:${clientPort}`, heartbeatMs: 200 } },
        [workerClass('wr.svc', {}, (t) => void ran.push(t.id))],
        clientPort,
      ));
      const client = http[1];
      const pending = async (): Promise<string[] | undefined> => ((await client.get(DistributedQueueHealthIndicator).isHealthy('q'))['q'].startup as { pending?: string[] }).pending;
      expect(await pending()).toEqual(['Redis server check', 'service mode']);
      servers.push(await startRedisServer({ port }));
      await waitFor(async () => (await client.get(DistributedQueueHealthIndicator).isHealthy('q'))['q'].status === 'up', { timeoutMs: 15_000, message: 'the application up' });
      await waitFor(() => client.get(TaskSubmitService).submit('wr.svc', {}, { id: 's1' }).then(() => true, () => false), { timeoutMs: 10_000, intervalMs: 200, message: 'submit taken' });
      await waitFor(() => ran.includes('s1'), { timeoutMs: 15_000, message: 'the scheduler delivered s1' });
    } finally {
      await Promise.all(http.map((app) => app.close()));
    }
  }, 60_000);

  it('two instances waiting: both start once Redis is up, share the partitions, and run each cron tick once', async () => {
    const port = await getFreePort();
    const keyPrefix = uniquePrefix('wr-two');
    const a = await start(`redis://${HOST}:${port}`, { keyPrefix, route: routeTestOptions(keyPrefix, 'a', 2) });
    const b = await start(`redis://${HOST}:${port}`, { keyPrefix, route: routeTestOptions(keyPrefix, 'b', 2) });
    servers.push(await startRedisServer({ port }));
    await expectEverythingRuns(a, [b]);
    await waitFor(async () => {
      const status = await a.app.inspect.getRouteStatus();
      return status.machines.length === 2 && new Set(status.partitions.map((p) => p.owner)).size === 2;
    }, { timeoutMs: 15_000, message: 'both machines own a partition' });
    expect((await b.health()).status).toBe('up');
    await sleep(2500);
    const ticks = [...a.cronRuns, ...b.cronRuns].map((r) => r.tickAt);
    expect(ticks.length).toBeGreaterThan(1);
    expect(new Set(ticks).size).toBe(ticks.length);
  }, 60_000);

  it('a cluster whose every node is paused: starts at once; every part starts after SIGCONT', async () => {
    const cluster: RedisClusterHandle = await startRedisCluster({ masters: 3 });
    try {
      cluster.servers.forEach((server) => server.kill('SIGSTOP'));
      const started = performance.now();
      const s = await start({ cluster: cluster.nodes });
      expect(performance.now() - started).toBeLessThan(5000);
      await sleep(1500);
      expect((await s.health()).startup?.status).toBe('down');
      cluster.servers.forEach((server) => server.kill('SIGCONT'));
      await expectEverythingRuns(s);
      await apps.pop()?.close();
    } finally {
      cluster.servers.forEach((server) => server.kill('SIGCONT'));
      await cluster.stop();
    }
  }, 90_000);

  it('paused server: starts at once; every part starts after SIGCONT', async () => {
    const server = await startRedisServer();
    servers.push(server);
    server.kill('SIGSTOP');
    const started = performance.now();
    const s = await start(server.url);
    expect(performance.now() - started).toBeLessThan(5000);
    expect((await s.health()).startup?.status).toBe('down');
    await sleep(1500);
    expect((await s.health()).startup?.status).toBe('down');
    server.kill('SIGCONT');
    await expectEverythingRuns(s);
  }, 60_000);

  it('a database the server refuses: health shows its answer, nothing is written to DB 0; starts once the database exists', async () => {
    const server = await startRedisServer({ extraArgs: ['--databases', '4'] });
    servers.push(server);
    const s = await start({ host: HOST, port: server.port, db: 9 });
    await waitFor(async () => /DB index is out of range/.test((await s.health()).startup?.message ?? ''), { timeoutMs: 10_000, message: 'the refusal shown' });
    await sleep(1000);
    const admin = new Redis({ host: HOST, port: server.port, maxRetriesPerRequest: 1 });
    try {
      expect(await admin.dbsize()).toBe(0);
    } finally {
      admin.disconnect();
    }
    await server.stop();
    const wide = await startRedisServer({ port: server.port, extraArgs: ['--databases', '16'] });
    servers.push(wide);
    await expectEverythingRuns(s);
  }, 60_000);

  it('a part that cannot start for another reason: health names it; the parts after it stay stopped', async () => {
    const server = await startRedisServer();
    servers.push(server);
    const prefix = uniquePrefix('wr-shrunk');
    // The queue holds 4 partitions; this application asks for 2 (shrinking is refused).
    const first = await startQueueApp({ connection: server.url, keyPrefix: prefix, route: routeTestOptions(prefix, 'first', 4) }, [workerClass('wr.ordered', { ordered: true }, () => undefined)]);
    await first.close();
    const s = await start(server.url, { keyPrefix: prefix, route: routeTestOptions(prefix, 'solo', 2) });
    await waitFor(async () => (await s.health()).startup?.message?.startsWith('route queue failed to start') === true, { timeoutMs: 10_000, message: 'the failed part named' });
    const health = await s.health();
    expect(health.status).toBe('down');
    expect(health.startup?.message).toMatch(/has 4 partitions; 2 is fewer/);
    expect(health.startup?.pending).toEqual(['route queue', 'distributed cron']);
    // The workers started before it run; the rest stays stopped, and the application still runs.
    await s.app.submit.submit('wr.delay', {}, { id: 'd1' });
    await waitFor(() => s.ran.includes('d1'), { timeoutMs: 10_000, message: 'the delay worker ran' });
    await sleep(1500);
    expect(s.cronRuns).toEqual([]);
  }, 60_000);

  it('Redis up: health up at once, workers run (the option changes nothing else)', async () => {
    const server = await startRedisServer();
    servers.push(server);
    const s = await start(server.url);
    await expectEverythingRuns(s);
  }, 60_000);

  it('stops within shutdownTimeoutMs + 2 s while waiting, and connects to nothing afterwards', async () => {
    const port = await getFreePort();
    const s = await start(`redis://${HOST}:${port}`);
    await sleep(500);
    const closing = performance.now();
    await s.app.close();
    expect(performance.now() - closing).toBeLessThan(500 + 2000 + 1000);
    const server = await startRedisServer({ port });
    servers.push(server);
    const admin = new Redis({ host: HOST, port, maxRetriesPerRequest: 1 });
    const received = async (): Promise<number> => Number(/total_connections_received:(\d+)/.exec(await admin.info('stats'))?.[1]);
    try {
      const before = await received();
      await sleep(3000);
      // Only this check's own connection reached the server (ioredis retries at most every 2 s).
      expect(await received()).toBe(before);
      expect(await admin.dbsize()).toBe(0);
    } finally {
      admin.disconnect();
    }
  }, 60_000);

  it('without the option, start-up with Redis down fails with RedisStartupError', async () => {
    const port = await getFreePort();
    const error = await startQueueApp({ connection: `redis://${HOST}:${port}`, keyPrefix: uniquePrefix('wr'), startupTimeoutMs: 500 })
      .then(async (app) => app.close(), (e: unknown) => e);
    expect(error).toBeInstanceOf(RedisStartupError);
  }, 30_000);
});
