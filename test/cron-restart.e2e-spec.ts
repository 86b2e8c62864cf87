import { killAllChildren } from './support/child';
import { reported, startInstance } from './support/cron';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('distributed cron after every instance stopped, on %s', (_name, target) => {
  afterEach(() => killAllChildren());

  it('every instance down: on return the last missed tick runs once (not the oldest, not a burst), then the schedule resumes', async () => {
    const prefix = uniquePrefix('cron-restart');
    let fleet = await Promise.all(['a', 'b'].map((i) => startInstance(target, prefix, i)));
    await waitFor(() => reported(fleet, 'end').length >= 2, { timeoutMs: 10_000, message: 'ticks run' });
    fleet.forEach((c) => c.kill('SIGKILL'));
    await Promise.all(fleet.map((c) => c.exited));
    const downAt = Date.now();
    await sleep(4000);
    const restartAt = Date.now();
    fleet = await Promise.all(['c', 'd'].map((i) => startInstance(target, prefix, i, { DQ_REPORT_TICKS: '1' })));
    await waitFor(() => reported(fleet, 'end').filter((r) => r.tickAt > restartAt).length >= 2, { timeoutMs: 10_000, message: 'resumed' });
    // The ticks still pending from before the outage are handled first (the oldest missed ones): they do not
    // run; the first of them runs the last tick due by then, once.
    const messages = fleet.flatMap((c) => c.messages);
    const missed = messages.filter((m) => m.type === 'tick' && m.tick < restartAt);
    expect(missed.length).toBeGreaterThanOrEqual(1);
    const starts = reported(fleet, 'start').filter((r) => r.attempt === 1);
    for (const { tick } of missed) expect(starts.filter((r) => r.tickAt === tick)).toEqual([]);
    // NOTE: the catch-up is the run their handling submitted (between a missed tick's 'tick' and 'ticked'
    // messages): the last tick due when it looked, which may be after the handling started (a tick handled
    // at 0.95 s that looks at 1.05 s runs the tick of 1 s), so it is told by its submit, not by a time window.
    const endOf = (t: { instance: string; tick: number; at: number }) =>
      messages.find((m) => m.type === 'ticked' && m.instance === t.instance && m.tick === t.tick && m.at >= t.at)?.at ?? Infinity;
    const catchUps = messages.filter(
      (m) => m.type === 'submitted' && missed.some((t) => m.instance === t.instance && m.at >= t.at && m.at <= endOf(t)),
    );
    expect(catchUps).toHaveLength(1);
    const caughtUp = starts.filter((r) => r.tickAt === catchUps[0].tick);
    expect(caughtUp).toHaveLength(1);
    expect(caughtUp[0].tickAt).toBeGreaterThan(Math.max(...missed.map((t) => t.tick)));
    expect(caughtUp[0].tickAt).toBeGreaterThan(restartAt - 1000);
    // Nothing from the middle of the outage ran (a run cut by the kill may run again: attempt 2).
    expect(starts.filter((r) => r.tickAt > downAt + 1000 && r.tickAt < restartAt - 1000)).toEqual([]);
  });

  it("with missedTicks 'skip', ticks missed while every instance was down do not run", async () => {
    const prefix = uniquePrefix('cron-skip');
    const env = { DQ_MISSED: 'skip' };
    let fleet = [await startInstance(target, prefix, 'a', env)];
    await waitFor(() => reported(fleet, 'end').length >= 1, { timeoutMs: 10_000, message: 'ticks run' });
    fleet[0].kill('SIGKILL');
    await fleet[0].exited;
    const downAt = Date.now();
    await sleep(3000);
    fleet = [await startInstance(target, prefix, 'b', env)];
    const upAt = Date.now();
    await waitFor(() => reported(fleet, 'end').length >= 2, { timeoutMs: 10_000, message: 'resumed' });
    expect(reported(fleet, 'start').filter((r) => r.tickAt > downAt + 1000 && r.tickAt < upAt - 1000)).toEqual([]);
  });
});
