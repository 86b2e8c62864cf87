/**
 * Distributed cron: what the README promises of a `@DistributedCron` method's run cut by a crash with
 * `maxAttempts: 1`, against a real Redis (single and Cluster), the instances as child processes
 * (test/fixtures/cron-app.ts).
 * Failure matrix covered:
 * - README: `maxAttempts: 1` dead-letters a crashed run with `LeaseExpiredError` (the run's instance
 *   SIGKILLed in the method; it does not run again anywhere, the schedule goes on).
 */
import { reported, startInstance, type Run } from './support/cron';
import { startQueueApp, useAppsAndChildren } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('distributed cron: a crashed run with maxAttempts 1, on %s', (_name, target) => {
  const apps = useAppsAndChildren();

  it('with maxAttempts: 1, SIGKILL the instance in a run: the run is dead-lettered with LeaseExpiredError and runs nowhere else', async () => {
    const prefix = uniquePrefix('cron-dead');
    const env = { DQ_CRON: '*/3 * * * * *', DQ_VISIBILITY_MS: '1000', DQ_MAX_ATTEMPTS: '1' };
    const holder = await startInstance(target, prefix, 'a', { ...env, DQ_HOLD_FIRST_MS: '120000' });
    const first: Run = await holder.waitForMessage((m) => m.type === 'start', 15_000);
    const replicas = await Promise.all(['b', 'c'].map((i) => startInstance(target, prefix, i, env)));
    holder.kill('SIGKILL');
    await holder.exited;
    const admin = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false });
    apps.push(admin);
    const type = '__cron__.sweep';
    const id = `sweep@${first.tickAt}`;
    await waitFor(async () => (await admin.inspect.getState(type, id)) === 'dead', { timeoutMs: 20_000, message: 'the cut run was dead-lettered' });
    const dead = (await admin.inspect.listDead(type)).tasks;
    expect(dead.map((d) => d.id)).toEqual([id]);
    expect(dead[0].error).toMatchObject({ name: 'LeaseExpiredError', attempts: 1 });
    // The schedule goes on, and the cut tick did not run again.
    const fleet = [holder, ...replicas];
    await waitFor(() => reported(fleet, 'end').some((e) => e.tickAt >= first.tickAt + 6000), { timeoutMs: 20_000, message: 'later ticks ran' });
    expect(reported(fleet, 'start').filter((r) => r.tickAt === first.tickAt).map((r) => r.instance)).toEqual(['a']);
    expect(reported(fleet, 'end').filter((r) => r.tickAt === first.tickAt)).toEqual([]);
  }, 90_000);
});
