import { killAllChildren } from './support/child';
import { reported, startInstance } from './support/cron';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('distributed cron on %s', (_name, target) => {
  afterEach(() => killAllChildren());

  it('three instances with the same every-second schedule: one run per tick, never two at once', async () => {
    const prefix = uniquePrefix('cron-fleet');
    const fleet = await Promise.all(['a', 'b', 'c'].map((i) => startInstance(target, prefix, i)));
    const from = Math.ceil(Date.now() / 1000) * 1000 + 1000;
    await sleep(from + 10_000 - Date.now() + 500);
    const starts = reported(fleet, 'start').filter((r) => r.tickAt >= from && r.tickAt < from + 10_000);
    const ticks = starts.map((r) => r.tickAt);
    expect(new Set(ticks).size).toBe(ticks.length);
    expect(ticks.length).toBeGreaterThanOrEqual(9);
    expect(ticks.length).toBeLessThanOrEqual(11);
    const all = reported(fleet, 'start');
    const ends = reported(fleet, 'end');
    for (let i = 1; i < all.length; i++) {
      const previousEnd = ends.find((e) => e.tickAt === all[i - 1].tickAt)!;
      expect(previousEnd.at).toBeLessThanOrEqual(all[i].at);
    }
    for (const run of starts) expect(run.at).toBeGreaterThanOrEqual(run.tickAt);
    // NOTE: which instance runs a tick is a race between three processes' timers; on a loaded machine one
    // of them can win all ten (seen once in CI), so the spread is not asserted. That the others take
    // over when it goes is: see the SIGKILL test below.
  });

  it('SIGKILL the instance running a tick: the tick completes on another instance', async () => {
    const prefix = uniquePrefix('cron-kill');
    const env = { DQ_CRON: '*/3 * * * * *', DQ_VISIBILITY_MS: '1000' };
    const holder = await startInstance(target, prefix, 'a', { ...env, DQ_HOLD_FIRST_MS: '60000' });
    const first = await holder.waitForMessage((m) => m.type === 'start', 10_000);
    const other = await startInstance(target, prefix, 'b', env);
    holder.kill('SIGKILL');
    await holder.exited;
    const redone = await other.waitForMessage((m) => m.type === 'end' && m.tickAt === first.tickAt, 10_000);
    expect(redone.attempt).toBe(2);
    // The schedule goes on from the survivor.
    await other.waitForMessage((m) => m.type === 'end' && m.tickAt > first.tickAt, 10_000);
  });

});
