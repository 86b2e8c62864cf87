import { startQueueApp, useAppsAndChildren } from './support/queue-app';
import { api, runs, startClient, startScheduler, type HttpChild } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const liveInstances = async (scheduler: HttpChild, app: string): Promise<number> =>
  (await api(scheduler, 'GET', '/api/apps')).body.find((x: { app: string }) => x.app === app)?.instances.length ?? 0;

/** Whether tasks h0..h<n-1> of `type` are all done. */
async function allDone(scheduler: HttpChild, type: string, n: number): Promise<boolean> {
  const states = await Promise.all(Array.from({ length: n }, async (_, i) => (await api(scheduler, 'GET', `/api/tasks/${type}/h${i}`)).body.state));
  return states.every((s) => s === 'done');
}

describe.each(getTargets().map((t) => [t.name, t] as const))('service mode under failure on %s', (_name, target) => {
  const apps = useAppsAndChildren();

  it('an instance SIGKILLed while it holds deliveries: they are redelivered to the other instance', async () => {
    const prefix = uniquePrefix('svc-kill-inst');
    const options = { concurrency: 8, maxAttempts: 3, backoff: { type: 'fixed', delayMs: 100 } };
    const [scheduler, a, b] = await Promise.all([
      startScheduler(target, prefix),
      startClient(target, prefix, { app: 'shop', instance: 'shop-a', types: ['hold'], workerOptions: options }),
      startClient(target, prefix, { app: 'shop', instance: 'shop-b', types: ['hold'], workerOptions: options }),
    ]);
    await waitFor(async () => (await liveInstances(scheduler, 'shop')) === 2, { timeoutMs: 10_000 });
    for (let i = 0; i < 8; i++) await api(scheduler, 'POST', '/api/tasks', { type: 'hold', id: `h${i}`, payload: { holdMs: 1500 } });
    await waitFor(() => runs(a).length >= 2, { timeoutMs: 5000, message: 'shop-a holds deliveries' });
    a.kill('SIGKILL');
    expect((await a.exited).signal).toBe('SIGKILL');
    const heldByA = runs(a).map((r) => r.id);
    expect(runs(a, 'done')).toHaveLength(0);
    await waitFor(() => runs(b, 'done').length >= 8, { timeoutMs: 15_000, message: 'every task done on shop-b' });
    expect(runs(b, 'done').map((r) => r.id).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `h${i}`).sort());
    for (const id of heldByA) expect(runs(b).find((r) => r.id === id)?.attempt).toBe(2);
    await waitFor(() => allDone(scheduler, 'hold', 8), { timeoutMs: 5000, message: 'every task acknowledged' });
  });

  it('a scheduler replica SIGKILLed while it holds deliveries: the other replica delivers them again', async () => {
    const prefix = uniquePrefix('svc-kill-sched');
    const env = { SCHEDULER_VISIBILITY_MS: '1500' };
    const [s1, s2, client] = await Promise.all([
      startScheduler(target, prefix, { env }),
      startScheduler(target, prefix, { env }),
      startClient(target, prefix, { app: 'shop', instance: 'shop-a', types: ['hold'], workerOptions: { concurrency: 4 } }),
    ]);
    await waitFor(async () => (await liveInstances(s1, 'shop')) === 1 && (await liveInstances(s2, 'shop')) === 1, { timeoutMs: 10_000 });
    // Each replica holds at most 4 deliveries (the type's concurrency), so both hold some of the 8.
    for (let i = 0; i < 8; i++) await api(s2, 'POST', '/api/tasks', { type: 'hold', id: `h${i}`, payload: { holdMs: 1000 } });
    await waitFor(() => runs(client).length >= 8, { timeoutMs: 5000, message: 'all 8 delivered' });
    s1.kill('SIGKILL');
    expect((await s1.exited).signal).toBe('SIGKILL');
    await waitFor(() => allDone(s2, 'hold', 8), { timeoutMs: 15_000, message: 'every task done through the surviving replica' });
    const again = runs(client).filter((r) => r.attempt === 2);
    expect(again.length).toBeGreaterThanOrEqual(1);
    expect(again.length).toBeLessThanOrEqual(4);
    expect(new Set(runs(client).map((r) => r.id)).size).toBe(8);
  });

  it('a clock skew of ±30 s between the scheduler and its clients makes nothing early and refuses nothing', async () => {
    const prefix = uniquePrefix('svc-skew');
    const [scheduler, ahead, behind] = await Promise.all([
      startScheduler(target, prefix, { skewMs: -30_000 }),
      startClient(target, prefix, { app: 'shop', instance: 'shop-ahead', types: ['later'], skewMs: 30_000, workerOptions: { concurrency: 8 } }),
      startClient(target, prefix, { app: 'shop', instance: 'shop-behind', types: ['later'], skewMs: -30_000, workerOptions: { concurrency: 8 } }),
    ]);
    const producer = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: { later: {} } });
    apps.push(producer);
    await waitFor(async () => (await liveInstances(scheduler, 'shop')) === 2, { timeoutMs: 10_000 });
    const submitted = new Map<string, number>();
    for (let i = 0; i < 20; i++) {
      submitted.set(`l${i}`, Date.now());
      await producer.submit.submit('later', {}, { id: `l${i}`, delay: 1000 + 50 * i });
    }
    await waitFor(() => runs(ahead, 'done').length + runs(behind, 'done').length >= 20, { timeoutMs: 15_000, message: 'every task delivered' });
    const started = [...runs(ahead), ...runs(behind)];
    expect(started.map((r) => r.id).sort()).toEqual([...submitted.keys()].sort());
    expect(runs(ahead).length).toBeGreaterThan(0);
    expect(runs(behind).length).toBeGreaterThan(0);
    for (const run of started) {
      const i = Number(run.id.slice(1));
      // NOTE: 2 ms for rounding between this process's clock and Redis's (same machine).
      expect(run.at).toBeGreaterThanOrEqual(submitted.get(run.id)! + 1000 + 50 * i - 2);
      expect(run.attempt).toBe(1);
    }
  });
});
