/**
 * Shutdown with Redis down or silent completes within `shutdownTimeoutMs` + the close margin (2 s), for every
 * part of the library (issue 26, item 3).
 *
 * Failure matrix: each part × each state of Redis (a redis-server of this file's own, behind a TCP proxy
 * for the black hole); `shutdownTimeoutMs` 1000 ms and handlers that outlast it, so the grace is used whole.
 * | part \ Redis               | killed before close | killed during close | paused (SIGSTOP) | black-holed | killed again after an outage and recovery |
 * | delay workers              | tested              | tested              | tested           | tested      | tested |
 * | ordered workers            | tested              | tested              | tested           | tested      | tested |
 * | cron (a running schedule)  | tested              | tested              | tested           | tested      | tested |
 * | history writer (PG up)     | tested              | tested              | tested           | tested      | tested |
 * | service mode: scheduler + client app | tested    | tested              | tested           | tested      | tested |
 * | dashboard (a request in flight)      | tested    | tested              | tested           | tested      | tested |
 * Each cell: close() returns within shutdownTimeoutMs + 2 s + 1.5 s of slack for a loaded 2-core machine.
 */
import { Injectable, type INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import { DistributedCron, TaskSubmitService, type Task } from 'nestjs-distributed-queue';
import { signIn, startDashboard, TOKEN } from './support/dashboard';
import { PG_URL, useSchemaNames } from './support/pg';
import { startQueueApp, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getFreePort, startRedisServer, type RedisServerHandle } from './support/redis-server';
import { startHttpQueueApp } from './support/service-mode';
import { uniquePrefix } from './support/targets';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';
import { sleep, waitFor } from './support/wait';

const GRACE_MS = 1000;
const BOUND_MS = GRACE_MS + 2000 + 1500;
const secret = 'close-service-secret-0123456789';

/** A running part: `busy` resolves once it is doing work that outlasts the grace; `close` closes it. */
interface Part {
  busy(): Promise<void>;
  close(): Promise<void>;
}

let running = 0;
/** A handler that outlasts the grace (its timer does not keep the test process alive). */
const slow = async (): Promise<void> => {
  running++;
  await new Promise((resolve) => setTimeout(resolve, 20_000).unref());
};

@Injectable()
class SlowSchedule {
  @DistributedCron('* * * * * *', { name: 'close-cron', maxAttempts: 1 })
  async tick(): Promise<void> {
    await slow();
  }
}

type Maker = (connection: string, prefix: string, newSchema: () => string) => Promise<Part>;
const common = (prefix: string) => ({ keyPrefix: prefix, shutdownTimeoutMs: GRACE_MS, redisTimeoutMs: 2000 });

const PARTS: [string, Maker][] = [
  ['delay workers', async (connection, prefix) => {
    const app = await startQueueApp({ connection, ...common(prefix) }, [workerClass('c.delay', { concurrency: 4 }, slow)]);
    return { busy: async () => void (await app.submit.submitMany('c.delay', [{ payload: 1 }, { payload: 2 }])), close: () => app.close() };
  }],
  ['ordered workers', async (connection, prefix) => {
    const app = await startQueueApp({ connection, ...common(prefix), route: routeTestOptions(prefix, 'solo', 4) }, [workerClass('c.ordered', { ordered: true, concurrency: 4 }, slow)]);
    return { busy: async () => void (await app.submit.submitOrderedMany('c.ordered', [{ key: 'a', payload: 1 }, { key: 'b', payload: 2 }])), close: () => app.close() };
  }],
  ['cron', async (connection, prefix) => {
    const app = await startQueueApp({ connection, ...common(prefix) }, [SlowSchedule]);
    return { busy: async () => undefined, close: () => app.close() };
  }],
  ['history writer', async (connection, prefix, newSchema) => {
    const history = { connection: PG_URL, schema: newSchema(), flushIntervalMs: 50 };
    const app = await startQueueApp({ connection, ...common(prefix), history }, [workerClass('c.hist', { concurrency: 4 }, slow)]);
    return { busy: async () => void (await app.submit.submitMany('c.hist', Array.from({ length: 50 }, (_, i) => ({ payload: i })))), close: () => app.close() };
  }],
  ['service mode', async (connection, prefix) => {
    const [schedulerPort, clientPort] = [await getFreePort(), await getFreePort()];
    const scheduler = await startHttpQueueApp({ connection, ...common(prefix), mode: 'scheduler', scheduler: { secret, syncIntervalMs: 100 } }, [], schedulerPort);
    const client = await startHttpQueueApp(
      { connection, ...common(prefix), mode: 'service', service: { appName: 'close-app', secret, publicUrl: `http://127.0.0.1:${clientPort}`, heartbeatMs: 200 } },
      [workerClass('c.svc', { concurrency: 4 }, slow)],
      clientPort,
    );
    return {
      busy: async () => void (await client.get(TaskSubmitService).submitMany('c.svc', [{ payload: 1 }, { payload: 2 }])),
      close: async () => void (await Promise.all([client.close(), scheduler.close()])),
    };
  }],
  ['dashboard', async (connection, prefix) => {
    const dash = await startDashboard({ connection, ...common(prefix) }, { token: TOKEN }, [workerClass('c.dash', { concurrency: 4 }, slow)]);
    const { cookie } = await signIn(dash.call);
    return {
      busy: async () => {
        await dash.submit.submitMany('c.dash', [{ payload: 1 }, { payload: 2 }]);
        // A page refresh in flight while Redis goes away.
        void dash.call('/api/overview', { headers: { cookie } }).catch(() => undefined);
      },
      close: () => (dash.app as INestApplication).close(),
    };
  }],
];

/** The part's connections to the server (through the proxy; the one asking not counted) and its subscriptions. */
async function partConnections(port: number): Promise<{ clients: number; channels: number; patterns: number }> {
  const admin = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 });
  try {
    const info = await admin.info();
    const field = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(info)![1]);
    return { clients: field('connected_clients') - 1, channels: field('pubsub_channels'), patterns: field('pubsub_patterns') };
  } finally {
    admin.disconnect();
  }
}

type State = 'killed before close' | 'killed during close' | 'paused' | 'black-holed' | 'killed again after an outage and recovery';
const STATES: State[] = ['killed before close', 'killed during close', 'paused', 'black-holed', 'killed again after an outage and recovery'];

describe.each(PARTS)('closing with Redis down or silent: %s', (_name, make) => {
  let server: RedisServerHandle;
  let proxy: TcpProxy;
  const newSchema = useSchemaNames();
  beforeAll(async () => {
    server = await startRedisServer({ extraArgs: ['--save', ''] });
  });
  afterAll(() => server.remove());
  afterEach(async () => {
    if (server.isRunning()) server.kill('SIGCONT');
    await proxy?.close();
  });

  it.each(STATES)('%s: close() within shutdownTimeoutMs + 2 s', async (state) => {
    if (!server.isRunning()) await server.restart();
    proxy = await startTcpProxy({ port: server.port });
    const prefix = uniquePrefix('close');
    const before = running;
    const part = await make(`redis://127.0.0.1:${proxy.port}`, prefix, newSchema);
    await part.busy();
    await waitFor(() => running > before, { timeoutMs: 10_000, message: 'a handler runs' });
    if (state === 'killed again after an outage and recovery') {
      const connected = await partConnections(server.port);
      server.kill('SIGKILL');
      // NOTE: an outage of 1 s (was 2.5 s): every connection is lost at once and its reconnect attempts are
      // refused meanwhile; its length changes nothing else.
      await sleep(1000);
      await server.restart();
      // Recovered: every connection of the part is back (ioredis retries at most every 2 s) and has subscribed
      // again; then a moment for the replies to arrive.
      await waitFor(async () => {
        const now = await partConnections(server.port);
        return now.clients >= connected.clients && now.channels >= connected.channels && now.patterns >= connected.patterns;
      }, { timeoutMs: 10_000, message: 'the part reconnected' });
      await sleep(250);
    }
    let closing: Promise<void> | undefined;
    if (state === 'paused') server.kill('SIGSTOP');
    else if (state === 'black-holed') proxy.stall(true);
    else if (state !== 'killed during close') server.kill('SIGKILL');
    const started = performance.now();
    closing = part.close();
    if (state === 'killed during close') {
      await sleep(100);
      server.kill('SIGKILL');
    }
    await closing;
    const took = performance.now() - started;
    console.log(`[close] ${_name}, ${state}: ${Math.round(took)} ms`);
    expect(took).toBeLessThan(BOUND_MS);
  }, 60_000);
});
