/**
 * Distributed cron: a crash inside a tick after `advance` and before `submitRun`, against a real Redis
 * (single and Cluster), the instances as child processes (test/fixtures/cron-app.ts, crash hook
 * DQ_DIE_BEFORE_SUBMIT).
 * Failure matrix covered:
 * - crash between W4 and W5: the tick's chain was advanced, its run not submitted; replicas up -> the tick,
 *   handled again once its lease expired, submits its run once (late), and the chain is not advanced twice:
 *   every tick task is handled once on its first attempt and the chain stays two ticks ahead.
 */
import { spawnChild, killAllChildren } from './support/child';
import { reported, startInstance } from './support/cron';
import { connect, keysOf } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';
import { cronKeys } from 'nestjs-distributed-queue/cron/cron.store';

interface TickReport {
  type: 'tick' | 'ticked' | 'submitted';
  instance: string;
  tick: number;
  attempt: number;
  outcome?: string;
  at: number;
}

describe.each(getTargets().map((t) => [t.name, t] as const))('distributed cron: a crash between advance and submitRun, on %s', (_name, target) => {
  afterEach(() => killAllChildren());

  it('SIGKILL after advance, before submitRun: the tick handled again submits its run once, the chain is advanced once', async () => {
    const prefix = uniquePrefix('cron-w4w5');
    const env = { DQ_CRON: '*/2 * * * * *', DQ_VISIBILITY_MS: '4000', DQ_REPORT_TICKS: '1' };
    const replicas = await Promise.all(['b', 'c'].map((i) => startInstance(target, prefix, i, env)));
    // The third instance races the replicas for the ticks and dies in the first one it takes.
    const crashing = spawnChild('test/fixtures/cron-app.ts', {
      DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_INSTANCE: 'k', ...env, DQ_DIE_BEFORE_SUBMIT: '1',
    });
    const exit = await Promise.race([crashing.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 60_000))]);
    if (!exit || exit.signal !== 'SIGKILL') throw new Error(`k did not die in a tick (${JSON.stringify(exit)}):\n${crashing.output()}`);
    const cut: number = crashing.messages.find((m) => m.type === 'dying').tick;
    const fleet = [crashing, ...replicas];
    const ticks = (kind: TickReport['type']): TickReport[] => fleet.flatMap((c) => c.messages.filter((m: TickReport) => m.type === kind));
    // The cut tick runs late (after the 4 s lease), and the schedule goes on past it.
    await waitFor(() => reported(fleet, 'end').some((r) => r.tickAt === cut), { timeoutMs: 30_000, message: 'the cut tick ran' });
    await waitFor(() => reported(fleet, 'end').some((r) => r.tickAt >= cut + 6000), { timeoutMs: 30_000, message: 'the schedule went on' });

    // The crash cut the first attempt (nothing submitted); the second one submitted the run, once.
    expect(ticks('tick').filter((t) => t.tick === cut).map((t) => [t.instance === 'k', t.attempt])).toEqual([[true, 1], [false, 2]]);
    expect(ticks('submitted').filter((s) => s.tick === cut).map((s) => s.outcome)).toEqual(['submitted']);
    // One run per tick, every tick from the first run on: nothing skipped, nothing twice.
    const ends = reported(fleet, 'end').map((r) => r.tickAt);
    expect(new Set(ends).size).toBe(ends.length);
    const first = Math.min(...ends);
    const lastTick = Math.max(...ends);
    for (let tick = first; tick <= lastTick; tick += 2000) expect([tick, ends.includes(tick)]).toEqual([tick, true]);
    // Each tick task handled once on its first attempt: the repeated advance added no tick twice.
    const firstAttempts = ticks('tick').filter((t) => t.attempt === 1).map((t) => t.tick);
    expect(new Set(firstAttempts).size).toBe(firstAttempts.length);
    const redis = connect(target);
    try {
      // The chain still runs exactly two ticks ahead: "<version>:<furthest tick>:<next tick>".
      const chain = (await redis.hget(cronKeys(prefix).next, 'sweep'))!.split(':').map(Number);
      expect(chain[0]).toBe(1);
      expect(chain[1] - chain[2]).toBe(2000);
      const pending = (await redis.hkeys(keysOf(prefix, '__cron__').jobs)).map((id) => Number(id.split('@')[2])).sort();
      expect(pending.length).toBeLessThanOrEqual(3);
      expect(pending.every((at) => at > lastTick - 2000)).toBe(true);
    } finally {
      redis.disconnect();
    }
  }, 150_000);
});
