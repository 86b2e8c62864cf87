/**
 * Odd names in service mode (test odd-names covers plugin mode): types and task ids that a JSON body, a
 * registry object, a signed request or the scheduler API's URL paths could mistake, from an application's
 * registration to its handler.
 *
 * Failure matrix (single server and cluster):
 * | cell | checked |
 * | odd types registered | `__proto__`, `constructor`, `toString`, `/`, `?`, `#`, `%`, `&`, `:`, emoji: the registry lists each once for the application |
 * | odd ids submitted and delivered | a producer's submits of odd ids, and the API's: each delivered once with its exact id and type; the API reads each one's state by its URL-encoded path. Before: every delivery of the type named with an emoji failed (its name went into the `x-dq-delivery` header, which holds Latin-1 only) and the task died |
 * | unstorable and dot names at the API | a NUL, an unpaired surrogate, `.`/`..`: a 400, nothing written |
 */
import { api, runs, startClient, startScheduler } from './support/service-mode';
import { startQueueApp, useAppsAndChildren } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

/** No commas (the fixture's list of types) and no braces or white space (types refuse them). */
const TYPES = ['__proto__', 'constructor', 'toString', 'a:b/c', 'q?x=1#y', 'p%2F%', 'amp&k=v', '😀.t'];
const IDS = ['a/b/../c', '?state=dead', 'x#/route', 'k=v&task=x', '100%', '%2F', 'a+b c', '__proto__', 'toString', '😀', 'e\u0301', ' ', '"\\', 'a\nb'];

describe.each(getTargets().map((t) => [t.name, t] as const))('service mode: odd names on %s', (_name, target) => {
  const apps = useAppsAndChildren();

  it('odd types register and odd ids are delivered once each, exactly; the API reads them by URL-encoded paths and refuses unstorable ones', async () => {
    const prefix = uniquePrefix('svc-odd');
    const [scheduler, client] = await Promise.all([
      startScheduler(target, prefix),
      startClient(target, prefix, { app: 'odd', instance: 'odd-a', types: TYPES }),
    ]);
    const producer = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: Object.fromEntries(TYPES.map((t) => [t, {}])) });
    apps.push(producer);
    await waitFor(async () => (await api(scheduler, 'GET', '/api/apps')).body.find((x: any) => x.app === 'odd')?.instances.length === 1, { timeoutMs: 10_000 });
    const registered = (await api(scheduler, 'GET', '/api/apps')).body.find((x: any) => x.app === 'odd');
    expect(Object.keys(registered.types).sort()).toEqual([...TYPES].sort());

    for (const id of IDS) await producer.submit.submit(TYPES[0], { id }, { id });
    for (const type of TYPES) expect(await api(scheduler, 'POST', '/api/tasks', { type, id: `api-${type}`, payload: {} })).toEqual({ status: 201, body: { id: `api-${type}` } });
    const expected = [...IDS.map((id) => `${TYPES[0]}\n${id}`), ...TYPES.map((type) => `${type}\napi-${type}`)].sort();
    const done = () => runs(client, 'done').map((r) => `${r.taskType}\n${r.id}`).sort();
    await waitFor(() => done().length >= expected.length, { timeoutMs: 15_000, message: 'every task delivered' });
    expect(done()).toEqual(expected);
    for (const id of IDS) {
      const read = await api(scheduler, 'GET', `/api/tasks/${encodeURIComponent(TYPES[0])}/${encodeURIComponent(id)}`);
      expect([id, read.status, read.body?.state]).toEqual([id, 200, 'done']);
    }

    for (const id of ['a\u0000b', '\ud800', '.', '..']) {
      const refused = await api(scheduler, 'POST', '/api/tasks', { type: TYPES[0], id, payload: {} });
      expect([id, refused.status]).toEqual([id, 400]);
    }
    expect(await producer.inspect.getCounts(TYPES[0])).toMatchObject({ delayed: 0, ready: 0, running: 0, dead: 0 });
  });
});
