/**
 * Distributed cron: a crash inside an upsert that replaces a definition, against a real Redis (single and
 * Cluster), the instances as child processes (test/fixtures/cron-app.ts, crash hook DQ_DIE_AFTER_UPSERT).
 * Failure matrix covered:
 * - crash between W1 and W2: SIGKILL after the upsert script wrote the new version and its first ticks,
 *   before the old version's pending tick is cancelled -> the old ticks stay pending, are handled and do
 *   nothing; the new version runs once per tick.
 */
import { spawnChild, killAllChildren, type ChildHandle } from './support/child';
import { reported, startInstance } from './support/cron';
import { connect, keysOf } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

interface TickReport {
  type: 'tick' | 'ticked' | 'submitted';
  instance: string;
  tick: number;
  version: number;
  at: number;
}

describe.each(getTargets().map((t) => [t.name, t] as const))('distributed cron: a crash inside an upsert, on %s', (_name, target) => {
  afterEach(() => killAllChildren());

  it('SIGKILL after the upsert script, before the old tick is cancelled: the old ticks do nothing, the new version runs once per tick', async () => {
    const prefix = uniquePrefix('cron-w1w2');
    // The old definition ticks at seconds 0, 4, 8...; the new one at 2, 6, 10...: a run tells its version.
    const runner = await startInstance(target, prefix, 'a', { DQ_CRON: '*/4 * * * * *', DQ_REPORT_TICKS: '1' });
    await waitFor(() => reported([runner], 'end').length >= 1, { timeoutMs: 15_000, message: 'the old version ran' });
    const replacer = spawnChild('test/fixtures/cron-app.ts', {
      DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_INSTANCE: 'k', DQ_CRON: '2-58/4 * * * * *', DQ_DIE_AFTER_UPSERT: '1',
    });
    const exit = await Promise.race([replacer.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 30_000))]);
    if (!exit || exit.signal !== 'SIGKILL') throw new Error(`k did not die in its upsert (${JSON.stringify(exit)}):\n${replacer.output()}`);
    const upserted: { version: number; oldTick: string; at: number } = replacer.messages.find((m) => m.type === 'upserted');
    expect(upserted.version).toBe(2);
    const [, oldVersion, oldTickAt] = upserted.oldTick.split('@').map(Number);
    expect(oldVersion).toBe(1);

    const redis = connect(target);
    try {
      // The window was hit: the old version's last tick (two ticks ahead, 4 s or more away) was not cancelled.
      expect(await redis.hexists(keysOf(prefix, '__cron__').jobs, upserted.oldTick)).toBe(1);
      const fleet: ChildHandle[] = [runner, replacer];
      const ticks = (kind: TickReport['type']): TickReport[] => runner.messages.filter((m: TickReport) => m.type === kind);
      // It is handled when due, and does nothing.
      await waitFor(() => ticks('ticked').some((t) => t.tick === oldTickAt && t.version === 1), { timeoutMs: 20_000, message: 'the old tick was handled' });
      await waitFor(() => reported(fleet, 'end').filter((r) => r.tickAt > oldTickAt).length >= 2, { timeoutMs: 20_000, message: 'the new version ran' });
      expect(await redis.hexists(keysOf(prefix, '__cron__').jobs, upserted.oldTick)).toBe(0);

      // Every tick of the old version due after the upsert submitted nothing. NOTE: by due time, not by when
      // its handling ended: a tick handled just before the upsert (its run submitted then) may end after it
      // on a loaded machine (a full run, 2026-11-29).
      const oldTicks = ticks('ticked').filter((t) => t.version === 1 && t.tick > upserted.at);
      expect(oldTicks.length).toBeGreaterThanOrEqual(1);
      const submittedTicks = ticks('submitted').map((s) => s.tick);
      for (const { tick } of oldTicks) expect(submittedTicks).not.toContain(tick);
      // No run of the old rule after the upsert; the new rule's ticks ran once each.
      const after = reported(fleet, 'start').filter((r) => r.tickAt > upserted.at);
      expect(after.filter((r) => r.tickAt % 4000 === 0)).toEqual([]);
      const ends = reported(fleet, 'end').filter((r) => r.tickAt > upserted.at).map((r) => r.tickAt);
      expect(ends.length).toBeGreaterThanOrEqual(2);
      for (const tick of ends) expect(tick % 4000).toBe(2000);
      expect(new Set(ends).size).toBe(ends.length);
    } finally {
      redis.disconnect();
    }
  }, 90_000);
});
