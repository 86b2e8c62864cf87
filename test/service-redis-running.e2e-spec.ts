/**
 * Service mode: Redis taken away for 6 s under a running scheduler and one instance (both connected through a
 * TCP proxy to a redis-server of this file's own, with an append-only file), then brought back. When it goes,
 * task 'held' (2.5 s) is running on the instance and four tasks are due in 2 s.
 *
 * Failure matrix cell (docs/failure-matrix.md, section 5): "Redis down / paused / black-holed / restarted
 * (scheduler and apps)", while running:
 * | Redis is…                               | checked                                                                     |
 * | killed, restarted 6 s later (AOF)       | no delivery starts while it is away; the instance registers again by its    |
 * | paused (SIGSTOP) 6 s, continued         | heartbeats (its registration expired meanwhile) and delivery resumes by     |
 * | black-holed 6 s (proxy stall), back     | itself; the API submits again; every task runs exactly once, attempt 1      |
 * |                                         | ('held', whose result came back while Redis was away, is acked once it is   |
 * |                                         | back: not run again); each done, none dead                                  |
 * Restarted without persistence: service-redis-lost.e2e-spec.ts.
 */
import { useAppsAndChildren } from './support/queue-app';
import { api, runs } from './support/service-mode';
import { DUE_DURING, runThroughOutage, startOutageRedis, stateOf, stopOutageRedis, type Outage, type OutageRedis } from './support/service-redis-outage';
import { uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

// NOTE: two child processes start per test on a loaded machine, and each test waits 6 s of outage.
jest.setTimeout(80_000);

describe('service mode while Redis is taken away under a running scheduler', () => {
  useAppsAndChildren();
  let redis: OutageRedis | undefined;
  afterEach(async () => {
    await stopOutageRedis(redis);
    redis = undefined;
  });

  it.each<[string, Outage]>([
    ['killed, restarted 6 s later with its AOF', 'killed'],
    ['paused (SIGSTOP) 6 s, then continued', 'paused'],
    ['black-holed (proxy stall) 6 s, then back', 'black-holed'],
  ])('Redis %s: no delivery while it is away, the instance registers again, delivery resumes by itself; every task runs once, attempt 1', async (_how, how) => {
    redis = await startOutageRedis(true);
    const { scheduler, client, startsAtOutage, startsBeforeBack } = await runThroughOutage(redis, uniquePrefix(`svc-redis-${how}`), how);
    expect(startsBeforeBack).toBe(startsAtOutage);

    const ids = ['after', ...DUE_DURING, 'held'];
    await waitFor(async () => (await Promise.all(ids.map((id) => stateOf(scheduler, id)))).every((s) => s === 'done'), {
      timeoutMs: 30_000, message: 'every task done',
    });
    expect(runs(client).map((r) => [r.id, r.attempt]).sort()).toEqual(ids.map((id) => [id, 1]));
    expect((await api(scheduler, 'GET', '/api/dead/job')).body.total).toBe(0);
  });
});
