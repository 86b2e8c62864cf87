import { RouteNotConfiguredError } from 'nestjs-distributed-queue';
import { killAllChildren, spawnChild, type ChildHandle } from './support/child';
import { routeTestOptions } from './support/route';
import { useQueueApps } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

interface Report {
  type: 'start' | 'done' | 'ready';
  id: string;
}

function worker(target: RedisTarget, prefix: string): ChildHandle {
  return spawnChild('test/fixtures/worker-app.ts', {
    DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: 'pz', DQ_HOLD_MS: '40', DQ_CONCURRENCY: '2',
  });
}

describe.each(getTargets().map((t) => [t.name, t] as const))('pause and resume on %s', (_name, target) => {
  const { start } = useQueueApps(target);
  afterEach(() => killAllChildren());

  it('a pause holds across 3 processes and a restart; submits go on; resume runs everything once', async () => {
    const prefix = uniquePrefix('pause');
    const admin = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { pz: {} } });
    const children = [worker(target, prefix), worker(target, prefix), worker(target, prefix)];
    await Promise.all(children.map((c) => c.waitForMessage((m) => m.type === 'ready', 30_000)));
    const all = [...children];
    const started = (): string[] => all.flatMap((c) => c.messages.filter((m: Report) => m.type === 'start').map((m: Report) => m.id));
    const first = (await admin.submit.submitMany('pz', Array.from({ length: 60 }, (_, i) => ({ payload: i })))).map((r) => r.id);
    await waitFor(() => started().length >= 6, { timeoutMs: 10_000, message: 'work under way' });
    await admin.control.pause('pz');
    expect(await admin.control.isPaused('pz')).toBe(true);
    // Fetches in flight at the pause may still start their tasks; then nothing starts.
    await sleep(500);
    const atPause = started().length;
    expect(atPause).toBeLessThan(60);
    const more = (await admin.submit.submitMany('pz', Array.from({ length: 10 }, (_, i) => ({ payload: 100 + i })))).map((r) => r.id);
    children[0].kill('SIGTERM');
    await children[0].exited;
    children[0] = worker(target, prefix);
    all.push(children[0]);
    await children[0].waitForMessage((m) => m.type === 'ready', 30_000);
    await sleep(1200); // more than the workers' poll interval (200 ms) several times over
    expect(started().length - atPause).toBe(0);
    const counts = await admin.inspect.getCounts('pz');
    expect(counts.running).toBe(0);
    expect(counts.ready).toBe(70 - counts.done);
    await admin.control.resume('pz');
    expect(await admin.control.isPaused('pz')).toBe(false);
    await waitFor(async () => (await admin.inspect.getCounts('pz')).done === 70, { timeoutMs: 20_000, message: 'all 70 done after resume' });
    const ids = started();
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual([...first, ...more].sort());
  });

  it('an ordered type pauses its route queue, held in Redis (see route-pause.e2e-spec.ts)', async () => {
    const options = { connection: target.connection, keyPrefix: uniquePrefix('pause-ord'), workers: false, types: { ord: { ordered: true }, pz: {} } };
    const app = await start({ ...options, route: routeTestOptions('q', 'p', 2) });
    await app.control.pause('ord');
    expect(await app.control.isPaused('ord')).toBe(true);
    expect(await app.control.isPaused('pz')).toBe(false);
    const other = await start({ ...options, route: routeTestOptions('q', 'p2', 2) });
    expect(await other.control.isPaused('ord')).toBe(true);
    await other.control.resume('ord');
    expect(await app.control.isPaused('ord')).toBe(false);
    const noRoute = await start({ connection: target.connection, keyPrefix: uniquePrefix('pause-ord'), workers: false, types: { ord: { ordered: true } } });
    await expect(noRoute.control.pause('ord')).rejects.toThrow(RouteNotConfiguredError);
  });
});
