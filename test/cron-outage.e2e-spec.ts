/**
 * Distributed cron: every instance down for about 1.5 intervals, so that both ticks of the schedule's chain
 * (it runs two ahead) are due on return, against a real Redis (single and Cluster), the instances as child
 * processes (test/fixtures/cron-app.ts).
 * Failure matrix covered:
 * - crash of every instance at once, short outage (shorter than two intervals): two pending ticks due at
 *   once on return, handled together; the older one's `advance` made to come second (DQ_SLOW_LATE_ADVANCE_MS:
 *   the order a slow event loop, or Cluster's TIME answered by another node, can give) -> each tick time
 *   runs at most once and the documented policy holds: the last missed tick runs, once; the older does not.
 */
import { killAllChildren, spawnChild } from './support/child';
import { reported, startInstance } from './support/cron';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

const INTERVAL = 4000;

describe.each(getTargets().map((t) => [t.name, t] as const))('distributed cron after a short outage of every instance, on %s', (_name, target) => {
  afterEach(() => killAllChildren());

  it('two pending ticks due on return, the older advanced second: only the last missed tick runs, once', async () => {
    const prefix = uniquePrefix('cron-outage');
    const env = { DQ_CRON: '*/4 * * * * *' };
    const before = await Promise.all(['a', 'b'].map((i) => startInstance(target, prefix, i, env)));
    // The instances of after the outage load now (seconds with a cold compile cache, more under load) and start on a message.
    const after = ['c', 'd'].map((i) =>
      spawnChild('test/fixtures/cron-app.ts', {
        DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_INSTANCE: i, ...env,
        DQ_START_ON_MESSAGE: '1', DQ_SLOW_LATE_ADVANCE_MS: '1500', DQ_REPORT_TICKS: '1',
      }),
    );
    await Promise.all(after.map((c) => c.waitForMessage((m) => m.type === 'loaded', 90_000)));
    // Stop every instance half an interval after a tick ran: the chain holds the next two ticks.
    const last = await waitFor(
      () => {
        const tick = Math.max(...reported(before, 'end').map((r) => r.tickAt));
        return Date.now() >= tick + INTERVAL / 2 && Date.now() < tick + INTERVAL - 500 ? tick : null;
      },
      { timeoutMs: 30_000, intervalMs: 50, message: 'a tick ran, half an interval ago' },
    );
    before.forEach((c) => c.kill('SIGKILL'));
    await Promise.all(before.map((c) => c.exited));
    // Back after about 1.5 intervals: both pending ticks (last + 4 s, last + 8 s) are due when the
    // instances take ticks again (a third tick due by then, were the start slow, changes nothing below).
    await sleep(Math.max(0, last + 2 * INTERVAL + 300 - Date.now()));
    for (const child of after) child.send({ type: 'start' });
    await Promise.all(after.map((c) => c.waitForMessage((m) => m.type === 'ready', 30_000)));
    const fleet = [...before, ...after];
    await waitFor(() => after.some((c) => c.messages.some((m) => m.type === 'tick')), { timeoutMs: 20_000, message: 'ticks handled' });
    const firstHandled = Math.min(...after.flatMap((c) => c.messages.filter((m) => m.type === 'tick').map((m) => m.at as number)));
    const runsAfter = () => reported(fleet, 'start').filter((r) => r.tickAt > last);
    await waitFor(() => runsAfter().length >= 1, { timeoutMs: 20_000, message: 'a run after the outage' });
    const caughtUp = Math.min(...runsAfter().map((r) => r.tickAt));
    await waitFor(() => reported(fleet, 'end').some((r) => r.tickAt >= caughtUp + 2 * INTERVAL), { timeoutMs: 30_000, message: 'the schedule resumed' });
    // Both ticks of the chain were pending and handled on return.
    const missed = after.flatMap((c) => c.messages.filter((m) => m.type === 'tick' && m.tick <= last + 2 * INTERVAL)).map((m) => m.tick as number);
    expect([...new Set(missed)].sort()).toEqual([last + INTERVAL, last + 2 * INTERVAL]);
    // The first run after the outage is of the last tick due on return, not the oldest; nothing before it.
    expect(caughtUp).toBeGreaterThanOrEqual(last + 2 * INTERVAL);
    expect(caughtUp).toBeLessThanOrEqual(firstHandled + 1000);
    expect(runsAfter().filter((r) => r.tickAt < caughtUp)).toEqual([]);
    // Then one run per tick, none skipped.
    const ends = reported(fleet, 'end').filter((r) => r.tickAt > last).map((r) => r.tickAt);
    expect(new Set(ends).size).toBe(ends.length);
    for (let tick = caughtUp; tick <= Math.max(...ends); tick += INTERVAL) expect([tick, ends.includes(tick)]).toEqual([tick, true]);
  }, 120_000);
});
