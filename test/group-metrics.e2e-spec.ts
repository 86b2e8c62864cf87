/**
 * The groups of delay-queue types in the metrics (issue 29, item 3): the scrape-time gauges
 * `dq_groups_waiting{type}` (groups with waiting tasks) and `dq_group_backlog_max{type}` (the largest group's
 * waiting tasks), read with one `getGroups(type, { limit: 1 })` per delay type, against real servers (single
 * and cluster).
 *
 * Failure matrix (what each cell covers):
 * | cell                                  | checked                                                                   |
 * | groups with a backlog                 | 3 groups of 5, 3 and 1 waiting tasks: 3 and 5, as TaskGroupsService.getGroups says |
 * | a delay type without groups           | 0 and 0 (its tasks without a group count in no group)                      |
 * | an ordered type                       | no sample of either gauge                                                  |
 * | label cardinality                     | one sample per delay type and gauge, never a `group` label                 |
 * | the gauges follow the queue           | at the next scrape: tasks cancelled (2 and 3), a group paused (unchanged: its backlog stays), the type drained (0 and 0) |
 * | many groups                           | 20,000 groups of one task each: 20000 and 1, then 3 once a group grows; a scrape asks TaskGroupsService for the top group only (`getGroups(type, { limit: 1 })`, O(log n)) |
 */
import { Registry } from 'prom-client';
import { TaskGroupsService } from 'nestjs-distributed-queue';
import { parseExposition, sampleValue, type Sample } from './support/prometheus';
import { useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';

const GAUGES = ['dq_groups_waiting', 'dq_group_backlog_max'];

const scrape = async (registry: Registry): Promise<Sample[]> => parseExposition(await registry.metrics());

/** The two gauges of `type` in one scrape. */
async function gauges(registry: Registry, type: string): Promise<{ groups?: number; backlogMax?: number }> {
  const samples = await scrape(registry);
  return { groups: sampleValue(samples, 'dq_groups_waiting', { type }), backlogMax: sampleValue(samples, 'dq_group_backlog_max', { type }) };
}

describe.each(getTargets().map((t) => [t.name, t] as const))('groups in the metrics on %s', (_name, target: RedisTarget) => {
  const { start } = useQueueApps(target);

  it('show per delay type the groups with a backlog and the largest backlog, one series per type, following the queue', async () => {
    const registry = new Registry();
    const prefix = uniquePrefix('grp-gauges');
    const Ordered = workerClass('gm.ord', { ordered: true }, () => undefined);
    const app = await start({
      connection: target.connection, keyPrefix: prefix, route: routeTestOptions(prefix, 'm1', 2), types: { 'gm.a': {}, 'gm.none': {} }, metrics: { registry },
    }, [Ordered]);
    const groups = app.app.get(TaskGroupsService);
    // no worker of the delay types: the backlogs change by cancel and drain only
    await app.submit.submitMany('gm.a', [
      ...Array.from({ length: 5 }, (_, i) => ({ id: `big${i}`, payload: {}, group: 'big' })),
      ...Array.from({ length: 3 }, (_, i) => ({ id: `mid${i}`, payload: {}, group: 'mid', delay: 60_000 })),
      { id: 'small', payload: {}, group: 'small' },
    ]);
    await app.submit.submitMany('gm.none', [{ payload: {} }, { payload: {}, delay: 60_000 }]);

    expect(await gauges(registry, 'gm.a')).toEqual({ groups: 3, backlogMax: 5 });
    const top = await groups.getGroups('gm.a', { limit: 1 });
    expect([top.total, top.groups[0].waiting]).toEqual([3, 5]);
    expect(await gauges(registry, 'gm.none')).toEqual({ groups: 0, backlogMax: 0 });
    expect(await gauges(registry, 'gm.ord')).toEqual({ groups: undefined, backlogMax: undefined });
    const samples = (await scrape(registry)).filter((s) => GAUGES.includes(s.name));
    expect(samples.map((s) => `${s.name} ${JSON.stringify(s.labels)}`).sort()).toEqual([
      'dq_group_backlog_max {"type":"gm.a"}', 'dq_group_backlog_max {"type":"gm.none"}',
      'dq_groups_waiting {"type":"gm.a"}', 'dq_groups_waiting {"type":"gm.none"}',
    ]);

    for (const id of ['small', 'big0', 'big1', 'big2']) expect(await app.submit.cancel('gm.a', id)).toBe('cancelled');
    expect(await gauges(registry, 'gm.a')).toEqual({ groups: 2, backlogMax: 3 });
    // a paused group keeps its backlog
    await groups.pauseGroup('gm.a', 'mid');
    expect(await gauges(registry, 'gm.a')).toEqual({ groups: 2, backlogMax: 3 });
    expect(await app.control.drain('gm.a')).toBe(5);
    expect(await gauges(registry, 'gm.a')).toEqual({ groups: 0, backlogMax: 0 });
  });

  it('a type of 20,000 groups: one call for its top group per scrape counts them all and shows the largest backlog', async () => {
    const registry = new Registry();
    const prefix = uniquePrefix('grp-gauges-many');
    const n = 20_000;
    const app = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { 'gm.many': {} }, metrics: { registry } });
    await app.submit.submitMany('gm.many', Array.from({ length: n }, (_, i) => ({ payload: {}, group: `t${i}`, delay: 3_600_000 })));
    const read = jest.spyOn(app.app.get(TaskGroupsService), 'getGroups');
    expect(await gauges(registry, 'gm.many')).toEqual({ groups: n, backlogMax: 1 });
    expect(read.mock.calls).toEqual([['gm.many', { limit: 1 }]]);
    await app.submit.submitMany('gm.many', [{ payload: {}, group: 't7', delay: 3_600_000 }, { payload: {}, group: 't7', delay: 3_600_000 }]);
    expect(await gauges(registry, 'gm.many')).toEqual({ groups: n, backlogMax: 3 });
    expect(read.mock.calls).toHaveLength(2);
  }, 60_000);
});
