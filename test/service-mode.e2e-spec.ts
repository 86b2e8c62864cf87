import { killAllChildren } from './support/child';
import { startQueueApp, type QueueApp } from './support/queue-app';
import { api, runs, startClient, startScheduler, type HttpChild } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('service mode on %s', (_name, target) => {
  const apps: QueueApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
    await killAllChildren();
  });

  it('a scheduler delivers the tasks of two instances of an application, each once, over both; its API submits and reads state', async () => {
    const prefix = uniquePrefix('svc-basic');
    const [scheduler, a, b] = await Promise.all([
      startScheduler(target, prefix),
      startClient(target, prefix, { app: 'shop', instance: 'shop-a', types: ['order.close'], workerOptions: { concurrency: 4 } }),
      startClient(target, prefix, { app: 'shop', instance: 'shop-b', types: ['order.close'], workerOptions: { concurrency: 4 } }),
    ]);
    const producer = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: { 'order.close': {} } });
    apps.push(producer);
    await waitFor(async () => (await api(scheduler, 'GET', '/api/apps')).body.find((x: any) => x.app === 'shop')?.instances.length === 2, { timeoutMs: 10_000 });
    const ids = (await producer.submit.submitMany('order.close', Array.from({ length: 40 }, (_, i) => ({ id: `o${i}`, payload: { n: i } })))).map((r) => r.id);
    const viaApi = await api(scheduler, 'POST', '/api/tasks', { type: 'order.close', id: 'api-1', payload: {}, delay: 300 });
    expect(viaApi).toEqual({ status: 201, body: { id: 'api-1' } });
    expect((await api(scheduler, 'GET', '/api/tasks/order.close/api-1')).body.state).toBe('delayed');
    const all = [...ids, 'api-1'].sort();
    const done = () => [...runs(a, 'done'), ...runs(b, 'done')];
    await waitFor(() => done().length >= all.length, { timeoutMs: 15_000, message: 'every task delivered' });
    expect(done().map((r) => r.id).sort()).toEqual(all);
    expect(runs(a, 'done').length).toBeGreaterThan(5);
    expect(runs(b, 'done').length).toBeGreaterThan(5);
    await waitFor(async () => (await api(scheduler, 'GET', '/api/tasks/order.close/api-1')).body.state === 'done', { timeoutMs: 5000 });
  });
});
