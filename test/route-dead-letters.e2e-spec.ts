/**
 * The route queue keeps `route.maxDeadLetters` dead letters per partition, the newest.
 *
 * Failure matrix (single server and cluster; one partition):
 * | cell | expected |
 * | 8 tasks die with maxDeadLetters 5 | the 5 newest kept, in order of death |
 * | maxDeadLetters lowered between deployments, 3,000 to 10 | each later burial drains the oldest, at most the buried and 1,000 more a call (3,001 → 2,000 → 1,000 → 10 → 10), the newest kept: never the whole excess in one call (before: one LTRIM freed it all in one script, 10,000,000 letters of up to 1 MB each at once) |
 */
import { Logger } from '@nestjs/common';
import { useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const Dies = workerClass('rd', { ordered: true, maxAttempts: 1 }, () => {
  throw new Error('dies');
});

describe.each(getTargets().map((t) => [t.name, t] as const))('route dead letters on %s', (_n, target) => {
  const { start } = useQueueApps(target);
  beforeEach(() => jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  const options = (keyPrefix: string, maxDeadLetters: number) => ({
    connection: target.connection, keyPrefix, route: { ...routeTestOptions(keyPrefix, 'm1', 1), maxDeadLetters },
  });
  /** The id of the newest dead letter (the list's last): read past the first 1,000. */
  const newest = async (app: Awaited<ReturnType<typeof start>>) => {
    const letters = await app.inspect.listOrderedDead(1000);
    return letters.length < 1000 ? letters[letters.length - 1]?.id : undefined;
  };
  const deadCount = async (app: Awaited<ReturnType<typeof start>>) => (await app.inspect.getRouteStatus()).partitions[0].dead;

  it('keeps the newest maxDeadLetters', async () => {
    const keyPrefix = uniquePrefix('route-dead');
    const app = await start(options(keyPrefix, 5), [Dies]);
    for (let i = 0; i < 8; i++) {
      await app.submit.submitOrdered('rd', 'k', { i }, { id: `d${i}` });
      await waitFor(async () => (await app.inspect.listOrderedDead(1000)).some((l) => l.id === `d${i}`), { timeoutMs: 10_000, message: `d${i} dead` });
    }
    expect((await app.inspect.listOrderedDead(1000)).map((l) => l.id)).toEqual(['d3', 'd4', 'd5', 'd6', 'd7']);
  });

  it('lowered from 3,000 to 10: later burials drain the oldest in bounded steps, the newest kept', async () => {
    const keyPrefix = uniquePrefix('route-dead-lowered');
    const before = await start(options(keyPrefix, 3000), [Dies]);
    await before.submit.submitOrderedMany('rd', Array.from({ length: 3000 }, (_, i) => ({ key: `k${i % 50}`, payload: { i } })));
    await waitFor(async () => (await deadCount(before)) === 3000, { timeoutMs: 60_000, message: '3,000 dead letters' });
    await before.close();
    const after = await start(options(keyPrefix, 10), [Dies]);
    // each burial's count once it is in (the newest letter is the last of the list: read from the end)
    const counts: number[] = [];
    for (let i = 0; i < 4; i++) {
      await after.submit.submitOrdered('rd', 'last', { i }, { id: `n${i}` });
      const prev = counts[i - 1] ?? 3000;
      await waitFor(async () => {
        const [p] = (await after.inspect.getRouteStatus()).partitions;
        if (p.waiting > 0 || p.inFlight > 0) return false;
        return p.dead < 1000 ? (await newest(after)) === `n${i}` : p.dead !== prev;
      }, { timeoutMs: 10_000, message: `n${i} dead` });
      counts.push(await deadCount(after));
    }
    expect(counts).toEqual([2000, 1000, 10, 10]);
    const kept = (await after.inspect.listOrderedDead(1000)).map((l) => l.id);
    expect(kept.slice(-4)).toEqual(['n0', 'n1', 'n2', 'n3']);
    expect(kept).toHaveLength(10);
  });
});
