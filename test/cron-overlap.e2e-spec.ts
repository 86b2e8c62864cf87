/**
 * Distributed cron: what the README promises of runs that outlast the interval, against a real Redis
 * (single and Cluster), the instances as child processes (test/fixtures/cron-app.ts).
 * Failure matrix covered:
 * - README: runs of one schedule overlap when a run outlasts the interval, on different instances; one
 *   instance runs one run of a schedule at a time (the next tick's run waits for it).
 */
import { reported, startInstance, type Run } from './support/cron';
import { useAppsAndChildren } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('distributed cron: runs longer than the interval, on %s', (_name, target) => {
  useAppsAndChildren();

  it('a run longer than the interval: the next tick runs at once on another instance (overlap), after it on the same one', async () => {
    const prefix = uniquePrefix('cron-overlap');
    // Every 2 s, each run 5 s.
    const env = { DQ_CRON: '*/2 * * * * *', DQ_HOLD_MS: '5000' };
    const fleet = await Promise.all(['a', 'b'].map((i) => startInstance(target, prefix, i, env)));
    await waitFor(() => reported(fleet, 'end').length >= 3, { timeoutMs: 40_000, message: 'three runs ended' });
    const starts = reported(fleet, 'start');
    const ends = reported(fleet, 'end');
    const endOf = (run: Run) => ends.find((e) => e.tickAt === run.tickAt);
    const firstRun = starts[0];
    // The run of the next tick started while the first one ran (it ends 5 s after it started).
    const next = starts.find((s) => s.tickAt === firstRun.tickAt + 2000)!;
    expect(next).toBeDefined();
    expect(next.instance).not.toBe(firstRun.instance);
    expect(next.at).toBeLessThan(endOf(firstRun)!.at);
    // On one instance, its runs never overlap: each starts after its previous one ended.
    for (const instance of ['a', 'b']) {
      const mine = starts.filter((s) => s.instance === instance);
      for (let i = 1; i < mine.length; i++) {
        const before = endOf(mine[i - 1]);
        if (before) expect(mine[i].at).toBeGreaterThanOrEqual(before.at);
      }
    }
  }, 60_000);

  it('one instance and a run longer than the interval: the next tick waits for it (one run of a schedule at a time per instance)', async () => {
    const prefix = uniquePrefix('cron-serial');
    const only = await startInstance(target, prefix, 'a', { DQ_CRON: '*/2 * * * * *', DQ_HOLD_MS: '3000' });
    await waitFor(() => reported([only], 'end').length >= 2, { timeoutMs: 30_000, message: 'two runs ended' });
    await sleep(100);
    const [first, second] = reported([only], 'start');
    const firstEnd = reported([only], 'end')[0];
    expect(firstEnd.tickAt).toBe(first.tickAt);
    expect(second.tickAt).toBe(first.tickAt + 2000);
    // The second tick's run started only when the first ended (3 s after its start, 1 s past its own tick).
    expect(second.at).toBeGreaterThanOrEqual(firstEnd.at);
  }, 60_000);
});
