/**
 * Distributed cron while Redis is black-holed for an instance, then back.
 *
 * Failure matrix cell (docs/failure-matrix.md, section 4, "Redis down / paused / black-holed", running; the
 * killed and paused variants: redis-down-running.e2e-spec.ts): an every-second `@DistributedCron` schedule on
 * two instances of one Redis (a redis-server of this file's own); instance A reaches it through
 * test/support/tcp-proxy.ts, B directly:
 * | A's Redis is…                               | checked                                                      |
 * | black-holed (`stall`) 6 s, then answers again (no connection cut by the test) | no tick runs twice over A and B (A's calls sent into the silence, and re-sent after it, run nothing again); B goes on ticking meanwhile; once B is closed, A runs the next ticks by itself |
 * | black-holed 6 s for the only instance (A alone) | no tick runs twice; ticks resume by themselves (the last missed one, then the schedule) |
 */
import { recordingCron } from './support/cron';
import { startQueueApp, type QueueApp } from './support/queue-app';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { uniquePrefix } from './support/targets';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';
import { sleep, waitFor } from './support/wait';

describe('cron while Redis is black-holed', () => {
  let server: RedisServerHandle;
  let proxy: TcpProxy | undefined;
  const apps: QueueApp[] = [];
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterEach(async () => {
    proxy?.stall(false);
    await Promise.all(apps.splice(0).map((a) => a.close()));
    await proxy?.close();
    proxy = undefined;
  });
  afterAll(() => server.remove());

  it('black-holed 6 s under one of two instances, then back: no tick runs twice, ticks resume by themselves', async () => {
    proxy = await startTcpProxy({ port: server.port });
    const prefix = uniquePrefix('cron-bh');
    const name = 'bh-tick';
    const a = recordingCron(name);
    const b = recordingCron(name);
    const options = { keyPrefix: prefix, redisTimeoutMs: 1000, defaults: { pollIntervalMs: 100 } };
    const appA = await startQueueApp({ ...options, connection: `redis://127.0.0.1:${proxy.port}` }, [a.Sweeper]);
    apps.push(appA);
    const appB = await startQueueApp({ ...options, connection: server.url }, [b.Sweeper]);
    apps.push(appB);
    const ticks = (): number[] => [...a.runs, ...b.runs].map((r) => r.tickAt);
    await waitFor(() => ticks().length >= 3, { timeoutMs: 15_000, message: 'the schedule ticks' });

    // NOTE: silenced just after the next tick is due, so that A's calls of that tick (its take, advance, submit
    // of the run, acks) are likely in flight: run by Redis, their replies lost, or never delivered.
    const ran = ticks().length;
    await waitFor(() => ticks().length > ran, { timeoutMs: 15_000, intervalMs: 5, message: 'a tick runs' });
    await sleep(Math.max(0, Math.max(...ticks()) + 1000 + 10 - Date.now()));
    proxy.stall(true);
    const bBefore = b.runs.length;
    await sleep(6000);
    // The other instance goes on meanwhile.
    expect(b.runs.length).toBeGreaterThanOrEqual(bBefore + 3);
    const aSilent = a.runs.length;
    proxy.stall(false);
    await sleep(1500);
    await appB.close();

    // A alone from now on: it runs the next ticks by itself.
    await waitFor(() => a.runs.length >= aSilent + 3, { timeoutMs: 20_000, message: 'A ticks again' });
    const all = ticks();
    expect(all.length - new Set(all).size).toBe(0);
  }, 60_000);

  it('black-holed 6 s under the only instance, then back: no tick runs twice, ticks resume by themselves', async () => {
    proxy = await startTcpProxy({ port: server.port });
    const { Sweeper, runs } = recordingCron('bh-alone');
    apps.push(await startQueueApp({ connection: `redis://127.0.0.1:${proxy.port}`, keyPrefix: uniquePrefix('cron-bh1'), redisTimeoutMs: 1000, defaults: { pollIntervalMs: 100 } }, [Sweeper]));
    await waitFor(() => runs.length >= 2, { timeoutMs: 15_000, message: 'the schedule ticks' });
    const ran = runs.length;
    await waitFor(() => runs.length > ran, { timeoutMs: 5000, intervalMs: 5, message: 'a tick runs' });
    await sleep(Math.max(0, runs[runs.length - 1].tickAt + 1000 + 10 - Date.now()));
    proxy.stall(true);
    await sleep(6000);
    const silent = runs.length;
    proxy.stall(false);
    await waitFor(() => runs.length >= silent + 3, { timeoutMs: 20_000, message: 'ticks again' });
    const ticks = runs.map((r) => r.tickAt);
    expect(ticks.length - new Set(ticks).size).toBe(0);
  }, 60_000);
});
