import { useAppsAndChildren } from './support/queue-app';
import { getFreePort } from './support/redis-server';
import { api, runs, startClient, startScheduler, type HttpChild } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

/*
 * Failure matrix of service mode (docs/failure-matrix.md, section 5): an HTTP peer restarted as itself, the
 * same instance id on the same URL. The only instance is SIGKILLed while it holds a delivery (a connection
 * reset: a failed attempt), tasks are submitted while it is down (refused connections: no attempt spent,
 * they wait), then it starts again: the held task runs as attempt 2, the others as attempt 1, each once.
 * Single server and cluster.
 */

const liveInstances = async (scheduler: HttpChild, app: string): Promise<string[]> =>
  ((await api(scheduler, 'GET', '/api/apps')).body.find((x: { app: string }) => x.app === app)?.instances ?? []).map((i: { id: string }) => i.id);

const allDone = async (scheduler: HttpChild, ids: string[]): Promise<boolean> =>
  (await Promise.all(ids.map(async (id) => (await api(scheduler, 'GET', `/api/tasks/hold/${id}`)).body.state))).every((s) => s === 'done');

// NOTE: three child processes start in turn, each slow on a loaded machine (see START_TIMEOUT_MS).
jest.setTimeout(180_000);

describe.each(getTargets().map((t) => [t.name, t] as const))('service mode, an instance restarted as itself, on %s', (_name, target) => {
  useAppsAndChildren();

  it('the only instance SIGKILLed mid-delivery and restarted with its id and URL: the held task is attempt 2, the waiting ones attempt 1, each once', async () => {
    const prefix = uniquePrefix('svc-restart');
    const port = String(await getFreePort());
    // NOTE: concurrency 4: the held task's attempt 2 keeps its slot (it holds 600 s: until the delivery's
    // timeout, 60 s and the 2 s grace); with one slot, the waiting tasks queued behind it wait that long.
    const options = { concurrency: 4, maxAttempts: 3, backoff: { type: 'fixed', delayMs: 100 } };
    const client = () => startClient(target, prefix, { app: 'shop', instance: 'shop-a', types: ['hold'], workerOptions: options, env: { DQ_PORT: port } });
    const [scheduler, first] = await Promise.all([startScheduler(target, prefix), client()]);
    await waitFor(async () => (await liveInstances(scheduler, 'shop')).length === 1, { timeoutMs: 10_000, message: 'instance live' });
    await api(scheduler, 'POST', '/api/tasks', { type: 'hold', id: 'held', payload: { holdMs: 600_000 } });
    await first.waitForMessage((m) => m.type === 'start' && m.id === 'held', 10_000);
    first.kill('SIGKILL');
    await first.exited;
    // NOTE: the held task's retry is due 100 ms (its backoff) after its failed attempt: the waiting ones are
    // submitted after that, so they queue behind it (the order a loaded machine gave at times; the order given
    // by a quick one, them ahead of it, is the easy case).
    await waitFor(() => scheduler.output().includes('task held attempt 1 failed'), { timeoutMs: 10_000, message: 'the held attempt failed' });
    await sleep(200);

    const waiting = ['w0', 'w1', 'w2'];
    for (const id of waiting) await api(scheduler, 'POST', '/api/tasks', { type: 'hold', id, payload: { holdMs: 10 } });
    // Refused while it is down: no attempt spent, it leaves the registry, the tasks wait.
    await waitFor(async () => (await liveInstances(scheduler, 'shop')).length === 0, { timeoutMs: 15_000, message: 'instance gone' });
    // NOTE: a task taken just as the refusal came is handed back (released, no attempt): it settles as ready.
    await waitFor(async () => {
      const states = await Promise.all(waiting.map(async (id) => (await api(scheduler, 'GET', `/api/tasks/hold/${id}`)).body.state));
      return states.every((s) => s === 'ready');
    }, { timeoutMs: 10_000, message: 'the tasks waiting' });

    const second = await client();
    await waitFor(async () => (await liveInstances(scheduler, 'shop')).join() === 'shop-a', { timeoutMs: 15_000, message: 'instance back' });
    // NOTE: the held task runs again at once (holdMs 600 s): it is not waited for; its attempt is what counts.
    await waitFor(() => runs(second).some((r) => r.id === 'held') && waiting.every((id) => runs(second, 'done').some((r) => r.id === id)), {
      timeoutMs: 30_000, message: 'every task delivered again',
    });
    // NOTE: an instance reports a run done before the scheduler has its result line and acks it.
    await waitFor(() => allDone(scheduler, waiting), { timeoutMs: 10_000, message: 'the waiting tasks done in the scheduler' });
    expect(runs(first).map((r) => [r.id, r.attempt])).toEqual([['held', 1]]);
    expect(runs(second).map((r) => [r.id, r.attempt]).sort()).toEqual([['held', 2], ['w0', 1], ['w1', 1], ['w2', 1]]);
    expect((await api(scheduler, 'GET', '/api/dead/hold')).body.total).toBe(0);
  });
});
