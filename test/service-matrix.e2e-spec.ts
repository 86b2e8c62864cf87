import { killAllChildren, spawnChild } from './support/child';
import { getFreePort } from './support/redis-server';
import { api, command, runs, SERVICE_SECRET, startClient, startScheduler, type HttpChild, type RunReport } from './support/service-mode';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

/*
 * Failure matrix of service mode (docs/failure-matrix.md, section 5), the cells not about Redis outages
 * (an instance SIGSTOPped: service-stop.e2e-spec.ts):
 *  - README: `concurrency` bounds deliveries in flight per scheduler replica (handler runs counted over two
 *    instances, with a slow handler);
 *  - largest payload: exactly `maxPayloadBytes` (1 MiB by default) through the scheduler's API and through
 *    a `service.url` application, delivered whole; one byte more refused;
 *  - README: cancel during a delivery ends the attempt but not the handler;
 *  - crash between the registrations (types registered, the instance SIGKILLed before it listened): tasks
 *    wait with no attempt spent and run as attempt 1 once an instance is up;
 *  - long values: a type of 200 and an id of 256 characters through the API, a delivery, the registry and
 *    the dead letters; longer ones refused with a typed 4xx;
 *  - single server and cluster (both targets).
 * One scheduler, two instances of `shop` and one `service.url` instance of `mail` per target, shared by the
 * tests (each its own task type): starting processes is most of the time.
 */

const liveInstances = async (scheduler: HttpChild, app: string): Promise<string[]> =>
  ((await api(scheduler, 'GET', '/api/apps')).body.find((x: { app: string }) => x.app === app)?.instances ?? []).map((i: { id: string }) => i.id);

/** The runs of `taskType` a child reported. */
const runsOf = (child: HttpChild, taskType: string, kind: RunReport['type'] = 'start') => runs(child, kind).filter((r) => r.taskType === taskType);

/** The most handler runs of `taskType` at once over `children` (a run from its start to its done report). */
function mostAtOnce(children: HttpChild[], taskType: string): number {
  const marks = children.flatMap((c) => [...runsOf(c, taskType).map((r) => [r.at, 1]), ...runsOf(c, taskType, 'done').map((r) => [r.at, -1])]);
  // NOTE: at the same millisecond an end counts before a start (the next delivery follows the reply).
  marks.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, step] of marks) most = Math.max(most, (now += step));
  return most;
}

/** A payload whose JSON is exactly `bytes` bytes long: `{"pad":"xx…"}`. */
const payloadOf = (bytes: number) => ({ pad: 'x'.repeat(bytes - '{"pad":""}'.length) });
const MIB = 1024 * 1024;
/** The longest type allowed (200 characters; `a.b-c_` style characters). */
const LONG_TYPE = `long.${'t'.repeat(195)}`;
const bytesOf = (runs: RunReport[]) => runs.map((r) => [r.id, r.attempt, (r as RunReport & { bytes: number }).bytes]);

describe.each(getTargets().map((t) => [t.name, t] as const))('service mode matrix on %s', (_name, target: RedisTarget) => {
  const prefix = uniquePrefix('svc-matrix');
  const options = { concurrency: 3, maxAttempts: 3, timeoutMs: 10_000, backoff: { type: 'fixed', delayMs: 100 } };
  let scheduler: HttpChild;
  let a: HttpChild;
  let b: HttpChild;
  let mail: HttpChild;
  beforeAll(async () => {
    scheduler = await startScheduler(target, prefix);
    [a, b, mail] = await Promise.all([
      startClient(target, prefix, { app: 'shop', instance: 'shop-a', types: ['slow', 'big', 'hold', LONG_TYPE], workerOptions: options }),
      startClient(target, prefix, { app: 'shop', instance: 'shop-b', types: ['slow', 'big', 'hold', LONG_TYPE], workerOptions: options }),
      startClient(target, prefix, { app: 'mail', instance: 'mail-a', types: ['letter'], schedulerUrl: scheduler.url }),
    ]);
    await waitFor(async () => (await liveInstances(scheduler, 'shop')).length === 2 && (await liveInstances(scheduler, 'mail')).length === 1, {
      timeoutMs: 15_000, message: 'every instance live',
    });
  }, 240_000);
  afterAll(() => killAllChildren());

  it('concurrency bounds the deliveries in flight per scheduler replica, over all instances', async () => {
    const n = 18;
    for (let i = 0; i < n; i++) expect((await api(scheduler, 'POST', '/api/tasks', { type: 'slow', id: `c${i}`, payload: { holdMs: 400 } })).status).toBe(201);
    await waitFor(() => runsOf(a, 'slow', 'done').length + runsOf(b, 'slow', 'done').length === n, { timeoutMs: 30_000, message: 'every task done' });
    // Reached, never passed: 3 at once at most with one replica, whichever instance runs them.
    expect(mostAtOnce([a, b], 'slow')).toBe(3);
    expect(runsOf(a, 'slow').length).toBeGreaterThan(0);
    expect(runsOf(b, 'slow').length).toBeGreaterThan(0);
    expect(new Set([...runsOf(a, 'slow'), ...runsOf(b, 'slow')].map((r) => r.id)).size).toBe(n);
  });

  it('a payload of exactly maxPayloadBytes (1 MiB) is delivered whole, through the API and from a service.url application; one byte more is refused', async () => {
    expect((await api(scheduler, 'POST', '/api/tasks', { type: 'big', id: 'mib', payload: payloadOf(MIB) })).status).toBe(201);
    const over = await api(scheduler, 'POST', '/api/tasks', { type: 'big', id: 'over', payload: payloadOf(MIB + 1) });
    expect([over.status, over.body.error.name]).toEqual([400, 'PayloadTooLargeError']);
    expect(await command(mail, 'submit', { taskType: 'letter', id: 'mib', payload: payloadOf(MIB) })).toBe('mib');
    await expect(command(mail, 'submit', { taskType: 'letter', id: 'over', payload: payloadOf(MIB + 1) })).rejects.toMatchObject({ name: 'PayloadTooLargeError' });

    await waitFor(() => runsOf(a, 'big', 'done').length + runsOf(b, 'big', 'done').length === 1 && runsOf(mail, 'letter', 'done').length === 1, {
      timeoutMs: 30_000, message: 'both delivered',
    });
    expect(bytesOf([...runsOf(a, 'big'), ...runsOf(b, 'big')])).toEqual([['mib', 1, MIB]]);
    expect(bytesOf(runsOf(mail, 'letter'))).toEqual([['mib', 1, MIB]]);
    expect((await api(scheduler, 'GET', '/api/tasks/big/over')).body.state).toBe('unknown');
    expect(await command(mail, 'state', { taskType: 'letter', id: 'over' })).toBe('unknown');
    await waitFor(async () => (await api(scheduler, 'GET', '/api/tasks/letter/mib')).body.state === 'done', { timeoutMs: 10_000, message: 'acknowledged' });
  });

  it('cancel during a delivery ends the attempt (no retry) but not the handler, which runs to its end', async () => {
    const holdMs = 3000;
    await api(scheduler, 'POST', '/api/tasks', { type: 'hold', id: 'k', payload: { holdMs } });
    const started = await waitFor(() => [...runsOf(a, 'hold'), ...runsOf(b, 'hold')].find((r) => r.id === 'k'), { timeoutMs: 10_000, message: 'delivered' });
    const instance = started.instance === 'shop-a' ? a : b;
    expect((await api(scheduler, 'DELETE', '/api/tasks/hold/k')).body).toEqual({ result: 'cancel-requested' });
    // The attempt ends in the scheduler while the handler still holds.
    await waitFor(async () => (await api(scheduler, 'GET', '/api/tasks/hold/k')).body.state === 'unknown', { timeoutMs: 10_000, message: 'the attempt ended' });
    const endedAt = Date.now();
    expect(runsOf(instance, 'hold', 'done')).toEqual([]);
    const done = await instance.waitForMessage((m) => m.type === 'done' && m.id === 'k', 15_000);
    // It ran its whole hold (not aborted), after the scheduler had let the task go.
    expect(done.at - started.at).toBeGreaterThanOrEqual(holdMs - 50);
    expect(done.at).toBeGreaterThanOrEqual(endedAt - 50);
    await sleep(1000);
    expect([...runsOf(a, 'hold'), ...runsOf(b, 'hold')].map((r) => [r.id, r.attempt])).toEqual([['k', 1]]);
    expect((await api(scheduler, 'GET', '/api/dead/hold')).body.total).toBe(0);
  });
  it('a type of 200 and an id of 256 characters go through the API, a delivery and the dead letters; longer ones are a typed 4xx', async () => {
    const id = 'i'.repeat(256);
    const failing = `${'f'.repeat(255)}x`;
    expect(Object.keys((await api(scheduler, 'GET', '/api/apps')).body.find((x: { app: string }) => x.app === 'shop').types)).toContain(LONG_TYPE);
    expect((await api(scheduler, 'POST', '/api/tasks', { type: LONG_TYPE, id, payload: {} })).body).toEqual({ id });
    expect((await api(scheduler, 'POST', '/api/tasks', { type: LONG_TYPE, id: failing, payload: { fail: true } })).status).toBe(201);
    await waitFor(async () => (await api(scheduler, 'GET', `/api/tasks/${LONG_TYPE}/${id}`)).body.state === 'done', { timeoutMs: 20_000, message: 'done' });
    await waitFor(async () => (await api(scheduler, 'GET', `/api/dead/${LONG_TYPE}`)).body.total === 1, { timeoutMs: 20_000, message: 'dead' });
    const dead = (await api(scheduler, 'GET', `/api/dead/${LONG_TYPE}`)).body.tasks[0];
    expect([dead.id, dead.type]).toEqual([failing, LONG_TYPE]);
    const ran = [...runsOf(a, LONG_TYPE), ...runsOf(b, LONG_TYPE)];
    expect(ran.filter((r) => r.id === id).map((r) => r.attempt)).toEqual([1]);
    expect(ran.filter((r) => r.id === failing).map((r) => r.attempt).sort()).toEqual([1, 2, 3]);

    const refusals: [string, { status: number; body: any }, number, string][] = [
      ['type of 201', await api(scheduler, 'POST', '/api/tasks', { type: `${LONG_TYPE}x`, payload: {} }), 404, 'UnknownTaskTypeError'],
      ['id of 257', await api(scheduler, 'POST', '/api/tasks', { type: LONG_TYPE, id: `${id}x`, payload: {} }), 400, 'InvalidSubmitOptionsError'],
      ['state of an id of 257', await api(scheduler, 'GET', `/api/tasks/${LONG_TYPE}/${id}x`), 400, 'InvalidSubmitOptionsError'],
      ['cancel of an id of 8,000', await api(scheduler, 'DELETE', `/api/tasks/${LONG_TYPE}/${'y'.repeat(8000)}`), 400, 'InvalidSubmitOptionsError'],
    ];
    for (const [label, reply, status, name] of refusals) {
      expect([label, reply.status, reply.body?.error?.name]).toEqual([label, status, name]);
      expect([label, JSON.stringify(reply.body).length < 600]).toEqual([label, true]);
    }
  });
  it('an application SIGKILLed after registering its types, before it listened: its tasks wait, no attempt spent, and run once an instance is up', async () => {
    const doomed = spawnChild('test/fixtures/service-client-app.ts', {
      DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_APP: 'ghost', DQ_SECRET: SERVICE_SECRET,
      DQ_PORT: String(await getFreePort()), DQ_INSTANCE: 'ghost-0', DQ_TYPES: 'haunt', DQ_KILL_BEFORE_LISTEN: '1',
    });
    await doomed.waitForMessage((m) => m.type === 'booted', 90_000);
    expect((await doomed.exited).signal).toBe('SIGKILL');
    const ghost = () => (api(scheduler, 'GET', '/api/apps') as Promise<{ body: { app: string; instances: unknown[]; types: object }[] }>).then((r) => r.body.find((x) => x.app === 'ghost'));
    expect(Object.keys((await ghost())!.types)).toEqual(['haunt']);
    expect((await ghost())!.instances).toEqual([]);
    const ids = ['g0', 'g1', 'g2'];
    for (const id of ids) expect((await api(scheduler, 'POST', '/api/tasks', { type: 'haunt', id, payload: {} })).status).toBe(201);
    // NOTE: many of the scheduler's sync intervals (200 ms): long enough for a wrong delivery to have happened.
    await sleep(2000);
    for (const id of ids) expect([id, (await api(scheduler, 'GET', `/api/tasks/haunt/${id}`)).body.state]).toEqual([id, 'ready']);
    const alive = await startClient(target, prefix, { app: 'ghost', instance: 'ghost-1', types: ['haunt'] });
    await waitFor(() => runs(alive, 'done').length === ids.length, { timeoutMs: 30_000, message: 'the tasks ran' });
    expect(runs(alive).map((r) => [r.id, r.attempt]).sort()).toEqual(ids.map((id) => [id, 1]));
  });
});
