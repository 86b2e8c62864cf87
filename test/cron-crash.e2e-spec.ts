/**
 * Distributed cron through crashes of the instances that hold ticks, each against a real Redis (single and
 * Cluster), with the instances as child processes SIGKILLed by hooks in test/fixtures/cron-app.ts.
 * Failure matrix covered:
 * - crash between writes: SIGKILL after a tick's run was submitted and before the tick task was acked,
 *   five times in a row on the same tick chain (each retry is cut again) -> one run per tick;
 * - crash while holding a tick (taken, nothing done yet), replicas up -> the ticks due meanwhile run on
 *   time on them (the chain of ticks runs two ahead), the held tick runs late after its lease, each once;
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
    // The window was hit again and again: a tick handled again after its run had been submitted.
    expect(ticks(crashed, 'tick').some((t) => t.attempt >= 2)).toBe(true);

    // A last instance handles the ticks the crashes left (their leases expire) and goes on.
    const last = await startInstance(target, prefix, 'z', { ...env, DQ_REPORT_TICKS: '1' });
    const fleet = [...runners, ...crashed, last];
    const handled = [...new Set(ticks(crashed, 'tick').map((t) => t.tick))];
    await waitFor(() => handled.every((tick) => ticks([last], 'ticked').some((t) => t.tick === tick)), {
      timeoutMs: 30_000,
      message: 'the last instance handled every tick the crashes left',
    });
    const submits = fleet.flatMap((c) => c.messages.filter((m: { type: string }) => m.type === 'submitted')) as { tick: number; outcome: string }[];
    // Every tick a crash cut was handled again after its run had been submitted (each crashing instance
    // died right after its handler returned): the repeat finds its run submitted ('again'), or covered by a
    // catch-up of the ticks nobody handled while no instance ran ticks (superseded): nothing is submitted twice.
    expect(submits.length).toBeGreaterThan(0);
    const runs = [...new Set(submits.filter((s) => s.outcome === 'submitted').map((s) => s.tick))];
    const redis = connect(target);
    try {
      // Whatever those ticks submitted has run: no run waits or runs any more.
      await waitFor(async () => (await redis.hlen(keysOf(prefix, '__cron__.sweep').jobs)) === 0, { timeoutMs: 30_000, message: 'runs drained' });
      await waitFor(() => runs.every((tick) => reported(fleet, 'end').some((e) => e.tickAt === tick)), { timeoutMs: 30_000, message: 'every run ran' });
    } finally {
      redis.disconnect();
    }
    const count = endsPerTick(reported(fleet, 'end'));
    for (const tick of runs) expect([tick, count.get(tick)]).toEqual([tick, 1]);
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

  it('SIGKILL an instance holding a tick (taken, nothing done yet): the ticks due meanwhile run on the others, and it runs late', async () => {
    const prefix = uniquePrefix('cron-holder');
    // A long lease: were the schedule to wait for the dead holder's tick, four ticks would pass unrun.
    const env = { DQ_CRON: '*/2 * * * * *', DQ_VISIBILITY_MS: '12000', DQ_REPORT_TICKS: '1' };
    const replicas = await Promise.all(['b', 'c'].map((i) => startInstance(target, prefix, i, env)));
    // The third instance dies in the first tick it takes (it races the replicas for the ticks).
    const holder = startCrashing(target, prefix, 'k', { ...env, DQ_DIE_IN_TICK: '1' });
    const exit = await Promise.race([holder.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 60_000))]);
    if (!exit || exit.signal !== 'SIGKILL') throw new Error(`k did not die in a tick (${JSON.stringify(exit)}):\n${holder.output()}`);
    const held: number = ticks([holder], 'tick')[0].tick;
    const fleet = [holder, ...replicas];
    const meanwhile = [2000, 4000, 6000, 8000].map((d) => held + d);
    await waitFor(() => meanwhile.every((tick) => reported(fleet, 'end').some((e) => e.tickAt === tick)), {
      timeoutMs: 30_000,
      message: 'the ticks due while the dead holder held its tick ran',
    });
    // They ran on time, not after the dead holder's lease (12 s after its tick).
    for (const tick of meanwhile) expect(reported(fleet, 'start').find((r) => r.tickAt === tick)!.at).toBeLessThan(held + 12_000);
    // The held tick itself runs once its lease expired, once.
    await waitFor(() => reported(fleet, 'end').some((e) => e.tickAt === held), { timeoutMs: 40_000, message: 'the held tick ran late' });
    await waitFor(() => reported(fleet, 'end').some((e) => e.tickAt >= held + 16_000), { timeoutMs: 30_000, message: 'the schedule went on' });
    for (const [tick, n] of endsPerTick(reported(fleet, 'end'))) expect([tick, n]).toEqual([tick, 1]);
  }, 180_000);
});
