/**
 * Service mode: Redis killed under a running scheduler and one instance (both connected through a TCP proxy to
 * a redis-server of this file's own, without persistence) and started again 6 s later, empty. When it goes,
 * task 'held' (2.5 s) is running on the instance and four tasks are due in 2 s.
 *
 * Failure matrix cell (docs/failure-matrix.md, section 5): "Redis down / paused / black-holed / restarted
 * (scheduler and apps)", restarted without persistence while running. What holds:
 * - the registry (application, type owners, types, instance) is rebuilt by the instance's heartbeats alone: the
 *   scheduler lists the instance again, its API knows the type again (it refuses types no application owns)
 *   and delivers again by itself: a task submitted after runs once;
 * - 'held' ran once, before the loss (its result came back while Redis was away; the ack finds nothing);
 * - the four tasks due meanwhile are lost with the data: unknown, never run (with an AOF they run: see
 *   service-redis-running.e2e-spec.ts); nothing is dead.
 */
import { useAppsAndChildren } from './support/queue-app';
import { api, runs } from './support/service-mode';
import { DUE_DURING, runThroughOutage, startOutageRedis, stateOf, stopOutageRedis, type OutageRedis } from './support/service-redis-outage';
import { uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

// NOTE: two child processes start on a loaded machine, and the test waits 6 s of outage.
jest.setTimeout(80_000);

describe('service mode while Redis restarts empty under a running scheduler', () => {
  useAppsAndChildren();
  let redis: OutageRedis | undefined;
  afterEach(async () => {
    await stopOutageRedis(redis);
    redis = undefined;
  });

  it('Redis killed and restarted without persistence: the registry is rebuilt by heartbeats, delivery resumes by itself; the tasks due meanwhile are lost, none run twice', async () => {
    redis = await startOutageRedis(false);
    const { scheduler, client, startsAtOutage, startsBeforeBack } = await runThroughOutage(redis, uniquePrefix('svc-redis-empty'), 'restarted empty');
    expect(startsBeforeBack).toBe(startsAtOutage);
    // The API took 'after' (201): the type's owner was registered again.
    const apps = (await api(scheduler, 'GET', '/api/apps')).body;
    expect(apps).toEqual([expect.objectContaining({ app: 'shop', instances: [expect.objectContaining({ id: 'shop-a' })], types: { job: expect.any(Object) } })]);

    await waitFor(async () => (await stateOf(scheduler, 'after')) === 'done', { timeoutMs: 30_000, message: 'the task submitted after done' });
    await sleep(1000);
    for (const id of DUE_DURING) expect(await stateOf(scheduler, id)).toBe('unknown');
    expect(runs(client).map((r) => [r.id, r.attempt]).sort()).toEqual([['after', 1], ['held', 1]]);
    expect(runs(client, 'done').map((r) => r.id).sort()).toEqual(['after', 'held']);
    expect((await api(scheduler, 'GET', '/api/dead/job')).body.total).toBe(0);
  });
});
