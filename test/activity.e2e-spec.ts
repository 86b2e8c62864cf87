import { InvalidArgumentError, type Task } from 'nestjs-distributed-queue';
import { routeTestOptions } from './support/route';
import { useQueueApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

/*
 * Recent activity and counts of several types at once (what a dashboard overview and a metrics scrape ask
 * for): the same answers as one call per type, with the route queue read once for all its ordered types.
 */
describe.each(getTargets().map((t) => [t.name, t] as const))('activity and counts of several types on %s', (_name, target) => {
  const { start } = useQueueApps(target);

  it('getActivityOf and getCountsOf answer per type what getActivity and getCounts do', async () => {
    const fail = (task: Task<{ fail?: boolean }>) => {
      if (task.payload.fail) throw new Error('no');
    };
    const app = await start(
      { connection: target.connection, keyPrefix: uniquePrefix('activity'), route: routeTestOptions('q', 'm1', 4), types: { idle: {} } },
      [
        workerClass('oa', { ordered: true, maxAttempts: 1 }, fail),
        workerClass('ob', { ordered: true, maxAttempts: 1 }, fail),
        workerClass('d', { maxAttempts: 1 }, fail),
      ],
    );
    // The first call raises the followed flags: completions are logged from then on.
    await app.inspect.getActivityOf(['oa', 'ob', 'd']);
    await app.submit.submitOrderedMany('oa', [1, 2, 3].map((n) => ({ key: `k${n}`, payload: {} })));
    await app.submit.submitOrderedMany('ob', [{ key: 'k1', payload: { fail: true } }, { key: 'k2', payload: {} }]);
    await app.submit.submitMany('d', [{ payload: {} }, { payload: { fail: true } }, { payload: {} }, { payload: {}, delay: 60_000 }]);
    const types = ['oa', 'ob', 'd', 'idle'];
    const many = await waitFor(async () => {
      const found = await app.inspect.getActivityOf(types);
      const c = (type: string) => found.get(type)!.counts;
      return c('oa').completed === 3 && c('ob').completed === 1 && c('ob').dead === 1 && c('d').completed === 2 && c('d').dead === 1 ? found : null;
    }, { timeoutMs: 10_000, message: 'the activity of every type' });
    expect(many.get('oa')).toEqual({ windowMs: 60_000, counts: { completed: 3 } });
    expect(many.get('ob')).toEqual({ windowMs: 60_000, counts: { completed: 1, failed: 1, dead: 1 } });
    expect(many.get('d')).toEqual({ windowMs: 60_000, counts: { completed: 2, failed: 1, dead: 1 } });
    expect(many.get('idle')).toEqual({ windowMs: 60_000, counts: {} });
    for (const type of types) expect(await app.inspect.getActivity(type)).toEqual(many.get(type));

    const counts = await app.inspect.getCountsOf(types);
    expect([...counts.keys()]).toEqual(types);
    for (const type of types) expect(counts.get(type)).toEqual(await app.inspect.getCounts(type));
    expect(counts.get('oa')).toBe(counts.get('ob'));
    expect(counts.get('d')).toMatchObject({ delayed: 1, dead: 1 });
    expect(counts.get('oa')).toMatchObject({ dead: 1, ready: 0 });

    await expect(app.inspect.getActivityOf(['d'], 0)).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
