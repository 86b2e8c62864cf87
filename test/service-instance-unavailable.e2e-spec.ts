/**
 * Service mode: an instance that refuses a delivery before running anything (it answers 503 `Unavailable`:
 * its Redis unreachable for the replay check, as while its connection reconnects after an outage the
 * scheduler's connection has already survived; or it is starting) has not run the tasks: no attempt is spent.
 * (It was a failed attempt: after a Redis outage a task ran as attempt 2, or, refused long enough, went dead.)
 *
 * Failure matrix cell (docs/failure-matrix.md, section 5): "HTTP peer refuses before running (503 Unavailable)":
 * the instance's replay check failing (test/fixtures/replay-outage-hook.js) for 4 s while a task is due -> the
 * task is never dead or retried: it runs once, as attempt 1, once the check works again; the scheduler drops the
 * instance until its next heartbeat (logged once per refusal) and delivers to it again after.
 */
import { promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from './support/child';
import { useAppsAndChildren } from './support/queue-app';
import { api, runs, startClient, startScheduler, type HttpChild } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

const stateOf = async (scheduler: HttpChild, id: string): Promise<string> => (await api(scheduler, 'GET', `/api/tasks/job/${id}`)).body.state;
const liveInstances = async (scheduler: HttpChild): Promise<number> =>
  (await api(scheduler, 'GET', '/api/apps')).body.find((x: { app: string }) => x.app === 'shop')?.instances.length ?? 0;

jest.setTimeout(80_000);

const target = getTargets().find((t) => t.name === 'single') ?? getTargets()[0];

describe('service mode, an instance refusing deliveries before it runs them', () => {
  useAppsAndChildren();

  it('503 Unavailable (its replay check cannot reach Redis): no attempt spent; the task runs once, attempt 1, once it can', async () => {
    const prefix = uniquePrefix('svc-unavail');
    const down = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'dq-replay-')), 'down');
    await fs.writeFile(down, '');
    const [scheduler, client] = await Promise.all([
      startScheduler(target, prefix),
      startClient(target, prefix, {
        app: 'shop', instance: 'shop-a', types: ['job'], workerOptions: { maxAttempts: 2, backoff: { type: 'fixed', delayMs: 100 } },
        env: { DQ_REPLAY_DOWN_FILE: down, NODE_OPTIONS: `--require ${path.join(REPO_ROOT, 'test/fixtures/replay-outage-hook.js')}` },
      }),
    ]);
    await waitFor(async () => (await liveInstances(scheduler)) === 1, { timeoutMs: 15_000, message: 'instance live' });
    expect((await api(scheduler, 'POST', '/api/tasks', { type: 'job', id: 'refused', payload: {} })).status).toBe(201);
    await waitFor(() => /instance shop-a of "shop" refused a delivery \(Unavailable:/.test(scheduler.output()), { timeoutMs: 15_000, message: 'a delivery refused' });
    await sleep(4000); // several refusals and heartbeats: with maxAttempts 2 the task would be dead by now
    expect(await stateOf(scheduler, 'refused')).not.toBe('dead');
    expect(runs(client)).toEqual([]);

    await fs.rm(down);
    await waitFor(async () => (await stateOf(scheduler, 'refused')) === 'done', { timeoutMs: 30_000, message: 'the task done' });
    expect(runs(client).map((r) => [r.id, r.attempt])).toEqual([['refused', 1]]);
    expect((await api(scheduler, 'GET', '/api/dead/job')).body.total).toBe(0);
  });
});
