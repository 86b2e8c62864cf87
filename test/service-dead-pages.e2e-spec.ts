import { startQueueApp, useAppsAndChildren } from './support/queue-app';
import { api, startClient, startScheduler } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

/*
 * The scheduler API's dead-letter listing past its first page: `GET /api/dead/:type?offset=&limit=`.
 * Failure matrix: the deepest input (more dead letters than one page: every one reachable, each once, oldest
 * first); bad input (offset/limit not whole numbers in range: a typed 400 as { error }, nothing listed).
 * Both targets.
 */

const DEAD = 130;

describe.each(getTargets().map((t) => [t.name, t] as const))('scheduler API dead-letter pages on %s', (_name, target) => {
  const apps = useAppsAndChildren();

  it(`lists ${DEAD} dead letters page by page (offset, limit), each once; bad paging is a typed 400`, async () => {
    const prefix = uniquePrefix('svc-dead-pages');
    const [scheduler] = await Promise.all([
      startScheduler(target, prefix),
      startClient(target, prefix, { app: 'shop', instance: 'shop-a', types: ['charge'], workerOptions: { maxAttempts: 1, concurrency: 16 } }),
    ]);
    await waitFor(async () => (await api(scheduler, 'GET', '/api/apps')).body.find((x: { app: string }) => x.app === 'shop')?.instances.length === 1, { timeoutMs: 10_000 });
    const producer = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: { charge: {} } });
    apps.push(producer);
    const ids = (await producer.submit.submitMany('charge', Array.from({ length: DEAD }, (_, i) => ({ id: `c${i}`, payload: { fail: true } })))).map((r) => r.id);
    await waitFor(async () => (await api(scheduler, 'GET', '/api/dead/charge')).body.total === DEAD, { timeoutMs: 30_000, message: 'every task dead' });

    const first = (await api(scheduler, 'GET', '/api/dead/charge')).body;
    expect(first.tasks).toHaveLength(100);
    const pages = await Promise.all([0, 50, 100].map(async (offset) => (await api(scheduler, 'GET', `/api/dead/charge?offset=${offset}&limit=50`)).body));
    expect(pages.map((p) => [p.total, p.tasks.length])).toEqual([[DEAD, 50], [DEAD, 50], [DEAD, 30]]);
    const listed = pages.flatMap((p) => p.tasks.map((t: { id: string }) => t.id));
    expect(listed.slice(0, 100)).toEqual(first.tasks.map((t: { id: string }) => t.id));
    expect([...listed].sort()).toEqual([...ids].sort());
    expect((await api(scheduler, 'GET', `/api/dead/charge?offset=${DEAD}`)).body).toEqual({ total: DEAD, tasks: [] });

    for (const query of ['offset=-1', 'offset=1.5', 'offset=x', 'limit=0', 'limit=1001', 'limit=', 'offset=1e3']) {
      const bad = await api(scheduler, 'GET', `/api/dead/charge?${query}`);
      expect([query, bad.status, bad.body.error?.name]).toEqual([query, 400, 'InvalidArgumentError']);
    }
  });
});
