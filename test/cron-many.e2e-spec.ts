/**
 * Distributed cron at its largest inputs, against a real Redis (single and Cluster), the applications in
 * this process.
 * Failure matrix covered:
 * - largest: 2,000 schedules -> each upsert reads only its own schedule back (no HGETALL per call);
 *   `list()`, the metrics gauges and the dashboard's overview show all 2,000, each read keeping a concurrent
 *   PING (another thread) fast;
 * - largest: a schedule whose payload is 1 MB (the default maxPayloadBytes) -> its runs get it whole.
 */
import { Registry } from 'prom-client';
import { TaskScheduleService, type Task } from 'nestjs-distributed-queue';
import { DEFAULT_MAX_PAYLOAD_BYTES } from 'nestjs-distributed-queue/service/request-body';
import { signIn, TOKEN, useDashboards } from './support/dashboard';
import { readWithoutBlocking } from './support/pinger';
import { parseExposition } from './support/prometheus';
import { useQueueApps, workerClass } from './support/queue-app';
import { monitorCalls } from './support/redis-stats';
import { getTargets, readInfraFile, uniquePrefix, type RedisTarget } from './support/targets';
import { waitFor } from './support/wait';

const N = 2000;

/** Every server of the target. */
function serverPorts(target: RedisTarget): number[] {
  const info = readInfraFile();
  return target.name === 'single' ? [info.single!.port] : info.cluster!.nodes.map((n) => n.port);
}

describe.each(getTargets().map((t) => [t.name, t] as const))('distributed cron at its largest on %s', (_name, target) => {
  const { start } = useDashboards();
  const { start: startApp } = useQueueApps(target);

  it('2,000 schedules: upserts read back one schedule each; list, metrics gauges and the dashboard show all without blocking Redis', async () => {
    const registry = new Registry();
    const prefix = uniquePrefix('cron-many');
    const { call, app } = await start(
      { connection: target.connection, keyPrefix: prefix, workers: false, types: { report: {} }, metrics: { registry, prefix: 'dqm_' } },
      { token: TOKEN },
      [],
    );
    const schedules = app.get(TaskScheduleService);
    const names = Array.from({ length: N }, (_, i) => `s${String(i).padStart(4, '0')}`);
    // NOTE: counted on this test's keys only (MONITOR): the servers are shared with other test files.
    const hgetalls = await monitorCalls(serverPorts(target), 'hgetall', prefix);
    for (let i = 0; i < N; i += 50) {
      await Promise.all(names.slice(i, i + 50).map((name) => schedules.upsert(name, { cron: '0 0 0 1 1 *', type: 'report', payload: { name } })));
    }
    // Each upsert answers its own schedule: read by name, not by listing all of them (2,000 x 4 HGETALLs).
    expect(await hgetalls.stop()).toBeLessThan(100);
    expect(await schedules.get('s0042')).toMatchObject({ name: 's0042', payload: { name: 's0042' }, version: 1 });

    const listed = await readWithoutBlocking(target, () => schedules.list());
    expect([listed.ok, listed.pings.max, listed.bound]).toEqual([true, listed.pings.max, listed.bound]);
    expect(listed.result.map((s) => s.name)).toEqual(names);
    expect(new Set(listed.result.map((s) => s.nextTickAt)).size).toBe(1);

    const scraped = await readWithoutBlocking(target, () => registry.metrics());
    expect(scraped.ok).toBe(true);
    const gauges = parseExposition(scraped.result).filter((s) => s.name === 'dqm_schedule_next_tick_timestamp_seconds');
    expect(gauges.map((g) => g.labels.schedule).sort()).toEqual(names);
    expect(gauges.every((g) => g.value === listed.result[0].nextTickAt! / 1000)).toBe(true);

    const { cookie } = await signIn(call);
    const overview = await readWithoutBlocking(target, async () => (await call('/api/overview', { headers: { cookie } })).json());
    expect(overview.ok).toBe(true);
    expect((overview.result as { schedules: { name: string }[] }).schedules.map((s) => s.name)).toEqual(names);
  }, 180_000);

  it('a schedule with a 1 MB payload runs with its payload whole', async () => {
    const runs: Task<{ blob: string }>[] = [];
    const W = workerClass('big', { pollIntervalMs: 100 }, (task: Task<{ blob: string }>) => void runs.push(task));
    const app = await startApp({ connection: target.connection, keyPrefix: uniquePrefix('cron-big'), schedules: true }, [W]);
    // The largest payload accepted: its JSON is DEFAULT_MAX_PAYLOAD_BYTES (1 MB) exactly.
    const blob = Array.from({ length: DEFAULT_MAX_PAYLOAD_BYTES - '{"blob":""}'.length }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    expect(Buffer.byteLength(JSON.stringify({ blob }))).toBe(DEFAULT_MAX_PAYLOAD_BYTES);
    const schedules = app.app.get(TaskScheduleService);
    await expect(schedules.upsert('big.too', { everyMs: 1000, type: 'big', payload: { blob: `${blob}x` } })).rejects.toThrow(/larger than 1048576 bytes/);
    const info = await schedules.upsert('big', { everyMs: 1000, type: 'big', payload: { blob } });
    expect((info.payload as { blob: string }).blob === blob).toBe(true);
    await waitFor(() => runs.length >= 2, { timeoutMs: 15_000, message: 'two runs' });
    for (const run of runs.slice(0, 2)) {
      expect(run.id).toMatch(/^big@\d+000$/);
      expect(run.payload.blob.length).toBe(blob.length);
      expect(run.payload.blob === blob).toBe(true);
    }
  }, 60_000);
});
