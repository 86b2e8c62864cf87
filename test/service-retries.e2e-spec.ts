/*
 * Service mode: where retries go, and what a dead instance costs (issue items 22 and 24).
 * Failure matrix covered:
 * - replicas: two scheduler replicas share the retries of failing tasks; each retry avoids the instance the
 *   task's previous attempt failed on, whichever replica delivered that attempt (the failed instance is
 *   recorded with the task in Redis by the script that schedules the retry);
 * - instance down (SIGKILL, the only one): its refused connections spend no attempt; the tasks wait, are
 *   not dead-lettered, and each runs once an instance is back.
 */
import { api, runs, startClient, startScheduler, type HttpChild, type RunReport } from './support/service-mode';
import { useAppsAndChildren } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const liveInstances = async (scheduler: HttpChild, app: string): Promise<number> =>
  (await api(scheduler, 'GET', '/api/apps')).body.find((x: { app: string }) => x.app === app)?.instances.length ?? 0;

const states = (scheduler: HttpChild, type: string, ids: string[]): Promise<string[]> =>
  Promise.all(ids.map(async (id) => (await api(scheduler, 'GET', `/api/tasks/${type}/${id}`)).body.state as string));

// NOTE: each test starts several child processes, whose start is slow on a loaded machine.
jest.setTimeout(180_000);

describe.each(getTargets().map((t) => [t.name, t] as const))('service mode retries on %s', (_name, target) => {
  useAppsAndChildren();

  it('with two scheduler replicas, no retry goes to the instance its previous attempt failed on', async () => {
    const prefix = uniquePrefix('svc-retry-avoid');
    const options = { concurrency: 4, maxAttempts: 3, backoff: { type: 'fixed', delayMs: 50 } };
    const [s1, s2, a, b] = await Promise.all([
      startScheduler(target, prefix),
      startScheduler(target, prefix),
      startClient(target, prefix, { app: 'shop', instance: 'shop-a', types: ['charge'], workerOptions: options }),
      startClient(target, prefix, { app: 'shop', instance: 'shop-b', types: ['charge'], workerOptions: options }),
    ]);
    await waitFor(async () => (await liveInstances(s1, 'shop')) === 2 && (await liveInstances(s2, 'shop')) === 2, { timeoutMs: 10_000 });
    const ids = Array.from({ length: 30 }, (_, i) => `c${i}`);
    for (const id of ids) expect((await api(id.length % 2 ? s1 : s2, 'POST', '/api/tasks', { type: 'charge', id, payload: { fail: true } })).status).toBe(201);
    await waitFor(async () => (await states(s1, 'charge', ids)).every((s) => s === 'dead'), { timeoutMs: 30_000, message: 'every task dead-lettered' });
    const all = [...runs(a), ...runs(b)];
    const dead = new Map<string, { instance?: string }>((await api(s2, 'GET', '/api/dead/charge')).body.tasks.map((t: { id: string; error: object }) => [t.id, t.error]));
    const wrong: string[] = [];
    for (const id of ids) {
      const attempts = all.filter((r) => r.id === id).sort((x, y) => x.attempt - y.attempt);
      expect(attempts.map((r) => r.attempt)).toEqual([1, 2, 3]);
      for (let i = 1; i < attempts.length; i++) if (attempts[i].instance === attempts[i - 1].instance) wrong.push(`${id} attempt ${attempts[i].attempt} on ${attempts[i].instance}`);
      // The dead letter's error names the instance its last attempt failed on.
      expect(dead.get(id)?.instance).toBe(attempts[2].instance);
    }
    expect(wrong).toEqual([]);
  });
  it('the only instance SIGKILLed: its refused connections spend no attempt; tasks wait, none dead, each runs once an instance is back', async () => {
    const prefix = uniquePrefix('svc-refused');
    const options = { concurrency: 8, maxAttempts: 3, backoff: { type: 'fixed', delayMs: 100 } };
    // NOTE: a long heartbeat TTL (3 x 3 s): the registry alone would keep the dead instance for up to 9 s.
    const slow = { DQ_HEARTBEAT_MS: '3000' };
    const [scheduler, first] = await Promise.all([
      startScheduler(target, prefix),
      startClient(target, prefix, { app: 'mail', instance: 'mail-1', types: ['mail.send'], workerOptions: options, env: slow }),
    ]);
    await waitFor(async () => (await liveInstances(scheduler, 'mail')) === 1, { timeoutMs: 10_000 });
    first.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const ids = Array.from({ length: 40 }, (_, i) => `m${i}`);
    for (const id of ids) expect((await api(scheduler, 'POST', '/api/tasks', { type: 'mail.send', id, payload: {} })).status).toBe(201);
    // Until the registry drops it (at once: the refusal removes it), then every task waits or is dead.
    await waitFor(async () => (await liveInstances(scheduler, 'mail')) === 0, { timeoutMs: 15_000, message: 'the dead instance dropped' });
    await waitFor(async () => (await states(scheduler, 'mail.send', ids)).every((s) => s === 'ready' || s === 'dead'), { timeoutMs: 15_000 });
    expect(await states(scheduler, 'mail.send', ids)).toEqual(ids.map(() => 'ready'));
    expect(scheduler.output()).toMatch(/instance mail-1 of "mail" refused a delivery \(the instance refused the connection\)/);
    const second = await startClient(target, prefix, { app: 'mail', instance: 'mail-2', types: ['mail.send'], workerOptions: options });
    await waitFor(() => runs(second, 'done').length >= ids.length, { timeoutMs: 15_000, message: 'every task ran on the new instance' });
    expect(runs(second).map((r: RunReport) => [r.id, r.attempt]).sort()).toEqual(ids.map((id) => [id, 1]).sort());
    await waitFor(async () => (await states(scheduler, 'mail.send', ids)).every((s) => s === 'done'), { timeoutMs: 10_000, message: 'every task done' });
  });
});
