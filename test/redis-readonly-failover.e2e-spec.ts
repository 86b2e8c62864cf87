/**
 * A failover that leaves the application's connections on a server demoted to a replica, as a managed Redis
 * does (its endpoint's name moves to the promoted replica; connections made before stay on the old master,
 * which becomes a replica of the new one and answers every write with READONLY). BullMQ's workers are known
 * to stall there for good; before this test so did this library's (submits refused with a raw ReplyError,
 * workers stopped, two warnings a second).
 *
 * Failure matrix (redis-servers of this file's own: A the master, B its replica; the application reaches
 * "the endpoint", a proxy whose new connections go where the name points):
 * | event | expected |
 * | B promoted, A demoted to B's replica, the endpoint moved to B | the next writes reconnect (to B) and go on: a submit resolves, delay and ordered tasks submitted after run once, the tasks submitted before run once; no warning at all (none per call) |
 * | the application's own reconnectOnError: null | kept: the library does not replace it (writes stay refused) |
 */
import { Logger } from '@nestjs/common';
import { CapturingLogger } from './support/capturing-logger';
import { startDelayProxy, type DelayProxy } from './support/delay-proxy';
import { startQueueApp, workerClass, type QueueApp } from './support/queue-app';
import { redisCommand, startRedisServer, type RedisServerHandle } from './support/redis-server';
import { routeTestOptions } from './support/route';
import { uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe('a failover that leaves the connections on the demoted master (READONLY)', () => {
  let a: RedisServerHandle;
  let b: RedisServerHandle;
  let endpoint: DelayProxy;
  let app: QueueApp | undefined;
  beforeEach(async () => {
    a = await startRedisServer();
    b = await startRedisServer({ extraArgs: ['--replicaof', '127.0.0.1', String(a.port)] });
    endpoint = await startDelayProxy({ upstreamPort: a.port, delayMs: 0, delayWhen: () => false });
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    Logger.overrideLogger(['error']);
    await endpoint.close();
    await Promise.all([a.remove(), b.remove()]);
  });

  /** B promoted, A made its replica, the endpoint's new connections to B. */
  async function failover(): Promise<void> {
    await waitFor(async () => /master_link_status:up/.test((await redisCommand(b.port, ['INFO', 'replication'])) ?? ''), { timeoutMs: 10_000, message: 'B in sync' });
    await redisCommand(b.port, ['REPLICAOF', 'NO', 'ONE']);
    await redisCommand(a.port, ['REPLICAOF', '127.0.0.1', String(b.port)]);
    endpoint.retarget(b.port);
  }

  const start = async (ran: string[], connection: object | string = `redis://127.0.0.1:${endpoint.port}`): Promise<QueueApp> => {
    const prefix = uniquePrefix('ro');
    app = await startQueueApp({
      connection: connection as string, keyPrefix: prefix, redisTimeoutMs: 2000, route: routeTestOptions(prefix, 'ro', 2), defaults: { pollIntervalMs: 100 },
    }, [workerClass('ro.t', {}, (t) => void ran.push(t.id)), workerClass('ro.o', { ordered: true }, (t) => void ran.push(t.id))]);
    return app;
  };

  it('the next writes reconnect to the promoted server: submits resolve, every task runs once, no warning per call', async () => {
    const ran: string[] = [];
    const app = await start(ran);
    await app.submit.submit('ro.t', {}, { id: 'before' });
    await app.submit.submit('ro.t', {}, { id: 'due-after', delay: 2000 });
    await app.submit.submitOrdered('ro.o', 'k', {}, { id: 'ordered-before' });
    await waitFor(() => ran.includes('before') && ran.includes('ordered-before'), { timeoutMs: 5000, message: 'the first tasks run' });
    const logger = new CapturingLogger();
    Logger.overrideLogger(logger);

    await failover();
    // The periodic calls (heartbeats, renewals, rebalances, takes) meet the demoted server first.
    await sleep(3000);
    expect(typeof (await app.submit.submit('ro.t', {}, { id: 'after' }))).toBe('string');
    expect((await app.submit.submitOrdered('ro.o', 'k', {}, { id: 'ordered-after' })).outcome).toBe('queued');
    await waitFor(() => ['after', 'ordered-after', 'due-after'].every((id) => ran.includes(id)), { timeoutMs: 15_000, message: 'the tasks after the failover run' });
    // Heartbeats, renewals and rebalances go on for a while on the new master.
    await sleep(3000);
    expect(ran.sort()).toEqual(['after', 'before', 'due-after', 'ordered-after', 'ordered-before']);
    expect([...logger.lines('warn'), ...logger.lines('error')]).toEqual([]);
  }, 60_000);

  it("the application's own reconnectOnError (null) is kept: writes stay refused", async () => {
    const ran: string[] = [];
    const app = await start(ran, { host: '127.0.0.1', port: endpoint.port, reconnectOnError: null });
    await app.submit.submit('ro.t', {}, { id: 'before' });
    await failover();
    const error = await app.submit.submit('ro.t', {}, { id: 'after' }).then(() => undefined, (e: Error) => e);
    expect(error?.message).toMatch(/READONLY/);
  }, 30_000);
});
