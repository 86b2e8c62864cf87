/**
 * Distributed cron through crashes of the instances that hold ticks, each against a real Redis (single and
 * Cluster), with the instances as child processes SIGKILLed by hooks in test/fixtures/cron-app.ts.
 * Failure matrix covered:
 * - crash between writes: SIGKILL after a tick's run was submitted and before the tick task was acked,
 *   five times in a row on the same tick chain (each retry is cut again) -> one run per tick;
 * - crash while holding a tick (taken, nothing done yet), replicas up -> the schedule goes on from them;
 * - crash in a run (the @DistributedCron method) with the decorator's default maxAttempts -> it completes on
 *   another instance;
 * - replicas: two or three instances beside the crashing ones.
 */
import { spawnChild, killAllChildren, type ChildHandle } from './support/child';
import { reported, startInstance, type Run } from './support/cron';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { connect, keysOf } from './support/queue-app';
import { waitFor } from './support/wait';

interface TickReport {
  type: 'tick' | 'ticked';
  instance: string;
  tick: number;
  attempt: number;
  at: number;
}

/** An instance with a crash hook: it may die before it reports ready, so it is not awaited for that. */
function startCrashing(target: RedisTarget, prefix: string, instance: string, env: Record<string, string>): ChildHandle {
  return spawnChild('test/fixtures/cron-app.ts', { DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_INSTANCE: instance, ...env });
}

const ticks = (children: ChildHandle[], kind: TickReport['type']): TickReport[] =>
  children.flatMap((c) => c.messages.filter((m: TickReport) => m.type === kind));

const endsPerTick = (ends: Run[]): Map<number, number> => {
  const count = new Map<number, number>();
  for (const end of ends) count.set(end.tickAt, (count.get(end.tickAt) ?? 0) + 1);
  return count;
};

describe.each(getTargets().map((t) => [t.name, t] as const))('distributed cron through crashes on %s', (_name, target) => {
  afterEach(() => killAllChildren());

  it('SIGKILL after the run of a tick was submitted and before the tick was acked, five times over: one run per tick', async () => {
    const prefix = uniquePrefix('cron-once');
    const env = { DQ_CRON: '*/2 * * * * *', DQ_VISIBILITY_MS: '1000' };
    // Two replicas run the runs but handle no ticks: only the crashing instances (and the last one) do.
    const runners = await Promise.all(['b', 'c'].map((i) => startInstance(target, prefix, i, { ...env, DQ_SCHEDULES: 'false' })));
    const crashed: ChildHandle[] = [];
    for (let i = 0; i < 5; i++) {
      const child = startCrashing(target, prefix, `k${i}`, { ...env, DQ_DIE_AFTER_TICK: '1' });
      crashed.push(child);
      const exit = await Promise.race([child.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 30_000))]);
      if (!exit || exit.signal !== 'SIGKILL') throw new Error(`k${i} did not die in its tick (${JSON.stringify(exit)}):\n${child.output()}`);
    }
    const handled = [...new Set(ticks(crashed, 'tick').map((t) => t.tick))];
    // The window was hit again and again: a tick retried after its run had been submitted.
    expect(ticks(crashed, 'tick').some((t) => t.attempt >= 2)).toBe(true);

    // A last instance handles the ticks the crashes left (their leases expire) and goes on.
    const last = await startInstance(target, prefix, 'z', { ...env, DQ_REPORT_TICKS: '1' });
    const fleet = [...runners, ...crashed, last];
    const done = (tick: number) => ticks([last], 'ticked').some((t) => t.tick === tick);
    await waitFor(() => handled.every(done), { timeoutMs: 30_000, message: 'the last instance handled every tick the crashes left' });
    const redis = connect(target);
    try {
      const runKeys = keysOf(prefix, '__cron__.sweep');
      // Whatever those ticks submitted has run: no run of them waits or runs any more.
      await waitFor(async () => (await redis.hlen(runKeys.jobs)) === 0, { timeoutMs: 30_000, message: 'runs drained' });
      await waitFor(() => handled.every((tick) => reported(fleet, 'end').some((e) => e.tickAt === tick)), { timeoutMs: 30_000, message: 'every tick ran' });
    } finally {
      redis.disconnect();
    }
    const count = endsPerTick(reported(fleet, 'end'));
    for (const tick of handled) expect([tick, count.get(tick)]).toEqual([tick, 1]);
    for (const [tick, n] of count) expect([tick, n]).toEqual([tick, 1]);
  }, 240_000);

  it("with the decorator's default maxAttempts, SIGKILL the instance in a run: the run completes on another instance", async () => {
    const prefix = uniquePrefix('cron-run-kill');
    const env = { DQ_CRON: '*/3 * * * * *', DQ_VISIBILITY_MS: '1000' };
    const holder = await startInstance(target, prefix, 'a', { ...env, DQ_HOLD_FIRST_MS: '120000' });
    const first: Run = await holder.waitForMessage((m) => m.type === 'start', 15_000);
    const replicas = await Promise.all(['b', 'c'].map((i) => startInstance(target, prefix, i, env)));
    holder.kill('SIGKILL');
    await holder.exited;
    const fleet = [holder, ...replicas];
    await waitFor(() => reported(fleet, 'end').find((e) => e.tickAt === first.tickAt), { timeoutMs: 30_000, message: 'the cut run completed elsewhere' });
    const ends = reported(fleet, 'end').filter((e) => e.tickAt === first.tickAt);
    expect(ends).toHaveLength(1);
    expect(ends[0].instance).not.toBe('a');
    expect(ends[0].attempt).toBe(2);
  }, 120_000);
});
