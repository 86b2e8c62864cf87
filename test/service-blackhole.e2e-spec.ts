import { useAppsAndChildren } from './support/queue-app';
import { getFreePort } from './support/redis-server';
import { api, runs, startClient, startScheduler, type HttpChild } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';
import { waitFor } from './support/wait';

/*
 * Failure matrix of service mode (docs/failure-matrix.md, section 5): an HTTP peer (an application instance)
 * black-holed by a proxy in front of its `publicUrl` (bytes dropped both ways, nothing closed). Each delivery
 * sent to it is a failed attempt once `timeoutMs` + 2 s have passed, retried on the other instance; its
 * heartbeats go to Redis, not through the proxy, so it stays registered; once the network is back it gets
 * deliveries again. Single server and cluster. (Paused by SIGSTOP instead: service-stop.e2e-spec.ts.)
 */

const liveInstances = async (scheduler: HttpChild, app: string): Promise<string[]> =>
  ((await api(scheduler, 'GET', '/api/apps')).body.find((x: { app: string }) => x.app === app)?.instances ?? []).map((i: { id: string }) => i.id);

describe.each(getTargets().map((t) => [t.name, t] as const))('service mode, an instance black-holed, on %s', (_name, target) => {
  useAppsAndChildren();
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  it('an instance black-holed by a proxy: each delivery a failed attempt after timeoutMs + 2 s, retried on the other; it gets deliveries again after', async () => {
    const prefix = uniquePrefix('svc-hole');
    const timeoutMs = 2000;
    const options = { concurrency: 8, maxAttempts: 3, timeoutMs, backoff: { type: 'fixed', delayMs: 100 } };
    const portA = await getFreePort();
    proxy = await startTcpProxy({ port: portA }, undefined, { raw: true });
    const [scheduler, a, b] = await Promise.all([
      startScheduler(target, prefix),
      startClient(target, prefix, { app: 'shop', instance: 'shop-a', types: ['hold'], workerOptions: options, env: { DQ_PORT: String(portA), DQ_PUBLIC_URL: `http://127.0.0.1:${proxy.port}` } }),
      startClient(target, prefix, { app: 'shop', instance: 'shop-b', types: ['hold'], workerOptions: options }),
    ]);
    await waitFor(async () => (await liveInstances(scheduler, 'shop')).length === 2, { timeoutMs: 10_000, message: 'two instances' });
    const submittedAt = new Map<string, number>();
    const submitAll = async (ids: string[]) => {
      for (const id of ids) {
        submittedAt.set(id, Date.now());
        await api(scheduler, 'POST', '/api/tasks', { type: 'hold', id, payload: { holdMs: 100 } });
      }
      await waitFor(async () => {
        const states = await Promise.all(ids.map(async (id) => (await api(scheduler, 'GET', `/api/tasks/hold/${id}`)).body.state));
        return states.every((s) => s === 'done');
      }, { timeoutMs: 30_000, message: 'every task acknowledged' });
    };

    proxy.stall(true);
    const silent = Array.from({ length: 8 }, (_, i) => `s${i}`);
    await submitAll(silent);
    // Nothing reached shop-a; what was sent to it ran on shop-b as attempt 2, after its bound.
    expect(runs(a)).toEqual([]);
    const retried = runs(b).filter((r) => r.attempt === 2);
    expect(retried.length).toBeGreaterThanOrEqual(1);
    for (const r of runs(b)) expect([r.id, r.attempt]).toEqual([r.id, retried.includes(r) ? 2 : 1]);
    expect(new Set(runs(b).map((r) => r.id))).toEqual(new Set(silent));
    // Given up no earlier than timeoutMs + 2 s after the request, which went out after the submit (a lower
    // bound: load only makes it later; 200 ms of slack for the clocks of two processes).
    for (const r of retried) expect(r.at - submittedAt.get(r.id)!).toBeGreaterThanOrEqual(timeoutMs + 2000 - 200);
    // Its heartbeats go to Redis, not through the proxy: it stays registered.
    expect((await liveInstances(scheduler, 'shop')).sort()).toEqual(['shop-a', 'shop-b']);

    proxy.stall(false);
    proxy.cut();
    const back = Array.from({ length: 8 }, (_, i) => `r${i}`);
    await submitAll(back);
    expect(runs(a).length).toBeGreaterThanOrEqual(1);
    expect([...runs(a), ...runs(b)].filter((r) => back.includes(r.id)).map((r) => r.id).sort()).toEqual([...back].sort());
  });
});
