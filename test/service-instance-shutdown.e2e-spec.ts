/**
 * Service mode: an instance shut down gracefully while a delivered task runs past its `shutdownTimeoutMs`
 * aborts the handler with `ShutdownError` and answers the task's line 503 `ShutdownError`; the scheduler takes
 * that as a delivery not made (`DeliveryNotMadeError`, "the instance stopped before the task ended"), as
 * plugin mode takes a shutdown: the task goes back to its place without spending an attempt, and runs again,
 * as attempt 1, on the next live instance.
 */
import { useAppsAndChildren } from './support/queue-app';
import { api, runs, startClient, startScheduler, taskState } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

jest.setTimeout(90_000);

const target = getTargets().find((t) => t.name === 'single') ?? getTargets()[0];

describe('service mode, an instance shut down while it runs a delivered task', () => {
  useAppsAndChildren();

  it('hands the task back without spending an attempt: it runs again as attempt 1 on the next instance, never dead', async () => {
    const prefix = uniquePrefix('svc-shutdown');
    // NOTE: one attempt: a delivery counted as a failed attempt would make the task dead.
    const client = { app: 'shop', types: ['job'], workerOptions: { maxAttempts: 1 } };
    const [scheduler, first] = await Promise.all([startScheduler(target, prefix), startClient(target, prefix, { ...client, instance: 'shop-a' })]);
    // The handler holds 4 s, longer than the instance's shutdownTimeoutMs (2 s, see the fixture).
    expect((await api(scheduler, 'POST', '/api/tasks', { type: 'job', id: 'held', payload: { holdMs: 4000 } })).status).toBe(201);
    await waitFor(() => runs(first).length === 1, { timeoutMs: 20_000, message: 'the task started on shop-a' });
    first.kill('SIGTERM');
    await first.exited;
    expect(runs(first, 'done')).toEqual([]);
    expect(await taskState(scheduler, 'job', 'held')).not.toBe('dead');

    const second = await startClient(target, prefix, { ...client, instance: 'shop-b' });
    await waitFor(async () => (await taskState(scheduler, 'job', 'held')) === 'done', { timeoutMs: 30_000, message: 'the task done on shop-b' });
    expect(runs(first).map((r) => [r.id, r.attempt])).toEqual([['held', 1]]);
    expect(runs(second).map((r) => [r.id, r.attempt])).toEqual([['held', 1]]);
    expect((await api(scheduler, 'GET', '/api/dead/job')).body.total).toBe(0);
  });
});
