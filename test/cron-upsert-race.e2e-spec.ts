/**
 * Distributed cron: two instances upserting different definitions of one schedule at the same time, many
 * rounds, against a real Redis (single and Cluster). The upserting instances are applications in this
 * process (each with its own connection); the runs go to two instances of test/fixtures/cron-app.ts.
 * Failure matrix covered:
 * - replicas: two instances upserting different definitions at once -> after each round exactly one of the
 *   two definitions is stored, under one new version per upsert; after the race only the winner's ticks
 *   run (each once), and the losers' pending ticks are gone.
 */
import { TaskScheduleService } from 'nestjs-distributed-queue';
import type { ChildHandle } from './support/child';
import { startInstance } from './support/cron';
import { connect, keysOf, startQueueApp, useAppsAndChildren } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

interface TaskReport {
  type: 'task';
  id: string;
  payload: { who: string; round: number };
  at: number;
}

const ROUNDS = 30;

const tasks = (fleet: ChildHandle[]): TaskReport[] => fleet.flatMap((c) => c.messages.filter((m: TaskReport) => m.type === 'task'));

describe.each(getTargets().map((t) => [t.name, t] as const))('distributed cron: racing upserts on %s', (_name, target) => {
  const apps = useAppsAndChildren();

  it('two instances upserting different definitions of one name at once, 30 rounds: one wins each round, only its ticks run', async () => {
    const prefix = uniquePrefix('cron-race');
    const fleet = await Promise.all(['a', 'b'].map((i) => startInstance(target, prefix, i, { DQ_RUN_TYPE: 'report', DQ_CRON: '0 0 0 1 1 *' })));
    const [one, two] = await Promise.all([0, 1].map(() => startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: { report: {} } })));
    apps.push(one, two);
    const [s1, s2] = [one, two].map((app) => app.app.get(TaskScheduleService));
    const definitions = (round: number) => [
      { everyMs: 1000, type: 'report', payload: { who: 'A', round } },
      { cron: '*/2 * * * * *', type: 'report', payload: { who: 'B', round } },
    ];
    for (let round = 1; round <= ROUNDS; round++) {
      const [a, b] = definitions(round);
      await Promise.all([s1.upsert('race', a), s2.upsert('race', b)]);
      const stored = (await s1.list()).find((s) => s.name === 'race')!;
      // Both upserts changed the definition: two new versions, and the one stored is one of the two, whole.
      expect([round, stored.version]).toEqual([round, 2 * round]);
      const winner = stored.payload as TaskReport['payload'];
      expect([round, winner.round]).toEqual([round, round]);
      expect(stored).toMatchObject(winner.who === 'A' ? { everyMs: 1000 } : { cron: '*/2 * * * * *' });
    }
    const endedAt = Date.now();
    const final = (await s2.list()).find((s) => s.name === 'race')!;
    const winner = final.payload as TaskReport['payload'];

    const redis = connect(target);
    try {
      // The losers' ticks (pending when they lost, due within two seconds) were handled or cancelled.
      const ticksJobs = keysOf(prefix, '__cron__').jobs;
      await waitFor(async () => (await redis.hkeys(ticksJobs)).filter((id) => id.startsWith('race@')).every((id) => id.split('@')[1] === String(final.version)), {
        timeoutMs: 15_000,
        message: "only the winner's ticks are pending",
      });
      await waitFor(() => tasks(fleet).filter((t) => Number(t.id.split('@')[1]) > endedAt + 1000).length >= 2, { timeoutMs: 15_000, message: "the winner's ticks ran" });
    } finally {
      redis.disconnect();
    }
    // Every tick after the race ran the winner's definition (a loser's tick due before the end may run), once.
    const after = tasks(fleet).filter((t) => Number(t.id.split('@')[1]) > endedAt + 1000);
    for (const task of after) expect(task.payload).toEqual(winner);
    if (winner.who === 'B') for (const task of after) expect(Number(task.id.split('@')[1]) % 2000).toBe(0);
    const ids = tasks(fleet).map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
  }, 90_000);
});
