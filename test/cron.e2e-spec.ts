import { killAllChildren, spawnChild, type ChildHandle } from './support/child';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

/** A run of the @DistributedCron method as an instance reported it. */
interface Run {
  type: 'start' | 'end';
  instance: string;
  schedule: string;
  tickAt: number;
  attempt: number;
  at: number;
}

async function startInstance(target: RedisTarget, prefix: string, instance: string, env: Record<string, string> = {}): Promise<ChildHandle> {
  const child = spawnChild('test/fixtures/cron-app.ts', { DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_INSTANCE: instance, ...env });
  await child.waitForMessage((m) => m.type === 'ready', 30_000).catch((error: Error) => {
    throw new Error(`${error.message}\n${child.output()}`);
  });
  return child;
}

const reported = (children: ChildHandle[], kind: Run['type']): Run[] =>
  children.flatMap((c) => c.messages.filter((m: Run) => m.type === kind)).sort((a, b) => a.at - b.at);

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
    expect(new Set(starts.map((r) => r.instance)).size).toBeGreaterThan(1);
  });
});
