/**
 * Service mode: a scheduler replica SIGKILLed at an exact point of a delivery, by a hook preloaded into it
 * (test/fixtures/service-crash-hook.js wraps the fetch the scheduler delivers with), then another replica.
 *
 * Failure matrix cells (docs/failure-matrix.md, section 5, service mode):
 * | Crash: scheduler between D1 and D2 (taken, not sent)   | SIGKILL after the take, before the POST: the instance never sees attempt 1; a replica started after |
 * |                                                        | delivers it once the lease is over (visibility 1.5 s): attempt 2, run once, done, no dead letter     |
 * | Crash: scheduler after the instance's line, before D5  | SIGKILL once the 200 result line reached the scheduler, before its ack: the task runs again through  |
 * |                                                        | the other replica (attempt 2: at least once, here exactly twice), then done, not dead, not lost      |
 * Single server and cluster.
 */
import * as path from 'path';
import { REPO_ROOT } from './support/child';
import { useAppsAndChildren } from './support/queue-app';
import { api, runs, startClient, startScheduler, type HttpChild } from './support/service-mode';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { waitFor } from './support/wait';

const liveInstances = async (scheduler: HttpChild, app: string): Promise<number> =>
  (await api(scheduler, 'GET', '/api/apps')).body.find((x: { app: string }) => x.app === app)?.instances.length ?? 0;

const stateOf = async (scheduler: HttpChild, type: string, id: string): Promise<string> => (await api(scheduler, 'GET', `/api/tasks/${type}/${id}`)).body.state;

/** The lease of a taken task ends after this (the scheduler's minimum is 1 s). */
const VISIBILITY = { SCHEDULER_VISIBILITY_MS: '1500' };

/** A scheduler that SIGKILLs itself at `at` (see the hook). */
const crashingScheduler = (target: RedisTarget, prefix: string, at: string): Promise<HttpChild> =>
  startScheduler(target, prefix, {
    env: { ...VISIBILITY, DQ_CRASH_AT: at, NODE_OPTIONS: `--require ${path.join(REPO_ROOT, 'test/fixtures/service-crash-hook.js')}` },
  });

// NOTE: three child processes start, the last after the crash; each is slow on a loaded machine.
jest.setTimeout(80_000);

describe.each(getTargets().map((t) => [t.name, t] as const))('service mode, a scheduler crashing inside a delivery, on %s', (_name, target) => {
  useAppsAndChildren();

  it('a scheduler replica SIGKILLed after its take, before the POST: another replica delivers the task after the visibility timeout, as attempt 2, once', async () => {
    const prefix = uniquePrefix('svc-crash-take');
    const options = { maxAttempts: 3, backoff: { type: 'fixed', delayMs: 100 } };
    const [s1, client] = await Promise.all([
      crashingScheduler(target, prefix, 'before-delivery'),
      startClient(target, prefix, { app: 'shop', instance: 'shop-a', types: ['job'], workerOptions: options }),
    ]);
    await waitFor(async () => (await liveInstances(s1, 'shop')) === 1, { timeoutMs: 15_000, message: 'instance live' });
    expect((await api(s1, 'POST', '/api/tasks', { type: 'job', id: 'taken', payload: {} })).status).toBe(201);

    const hook = await s1.waitForMessage((m) => m.type === 'crash-hook', 20_000);
    expect(hook.detail.ids).toEqual([['taken', 1]]);
    expect((await s1.exited).signal).toBe('SIGKILL');

    const s2 = await startScheduler(target, prefix, { env: VISIBILITY });
    await waitFor(async () => (await stateOf(s2, 'job', 'taken')) === 'done', { timeoutMs: 30_000, message: 'the task done through the other replica' });
    // Attempt 1 was taken and never sent: the instance saw only attempt 2, once.
    expect(runs(client).map((r) => [r.id, r.attempt])).toEqual([['taken', 2]]);
    expect(runs(client, 'done').map((r) => [r.id, r.attempt])).toEqual([['taken', 2]]);
    expect((await api(s2, 'GET', '/api/dead/job')).body.total).toBe(0);
  });

  it('a scheduler SIGKILLed after the instance wrote its result line, before the ack: the task runs again through another replica (attempt 2) and is then done, not dead', async () => {
    const prefix = uniquePrefix('svc-crash-line');
    const options = { maxAttempts: 3, backoff: { type: 'fixed', delayMs: 100 } };
    const [s1, a, b] = await Promise.all([
      crashingScheduler(target, prefix, 'after-result-line'),
      startClient(target, prefix, { app: 'shop', instance: 'shop-a', types: ['job'], workerOptions: options }),
      startClient(target, prefix, { app: 'shop', instance: 'shop-b', types: ['job'], workerOptions: options }),
    ]);
    await waitFor(async () => (await liveInstances(s1, 'shop')) === 2, { timeoutMs: 15_000, message: 'instances live' });
    expect((await api(s1, 'POST', '/api/tasks', { type: 'job', id: 'ran', payload: {} })).status).toBe(201);

    const hook = await s1.waitForMessage((m) => m.type === 'crash-hook', 20_000);
    expect(hook.detail.id).toBe('ran');
    expect(hook.detail.line.status).toBe(200);
    expect((await s1.exited).signal).toBe('SIGKILL');
    // The instance ran attempt 1 to its end and answered it.
    const first = [...runs(a, 'done'), ...runs(b, 'done')];
    expect(first.map((r) => [r.id, r.attempt])).toEqual([['ran', 1]]);

    const s2 = await startScheduler(target, prefix, { env: VISIBILITY });
    await waitFor(async () => (await stateOf(s2, 'job', 'ran')) === 'done', { timeoutMs: 30_000, message: 'the task done through the other replica' });
    // At least once: the unacknowledged attempt 1 is redone as attempt 2 (nothing crashes again, so exactly twice).
    const done = [...runs(a, 'done'), ...runs(b, 'done')].map((r) => [r.id, r.attempt]).sort();
    expect(done).toEqual([['ran', 1], ['ran', 2]]);
    expect([...runs(a), ...runs(b)]).toHaveLength(2);
    expect((await api(s2, 'GET', '/api/dead/job')).body.total).toBe(0);
  });
});
