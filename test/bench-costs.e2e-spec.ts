/**
 * The benchmark's cost per task (issue 34, item 3; README: "under the table each workload's cost per task
 * (Node CPU, Redis CPU, commands, round trips) beside Redis's own ceiling"): bench/cost.ts counts this
 * process's sends to Redis at the socket and reads the server's counters; bench/report.ts prints the table.
 * Against the single server of the global setup (skipped when only the cluster runs).
 * NOTE: the count wraps net.Socket's writes in this Jest worker for the rest of its files: a counter bumped
 * per write to that port, nothing else.
 */
import { Redis } from 'ioredis';
import { costSince, markCost, renderCosts } from '../bench/cost';
import { costSection, type Row } from '../bench/report';
import { getTargets } from './support/targets';

const single = getTargets().find((t) => t.name === 'single');

describe('benchmark cost per task', () => {
  it('renders each row that measured a cost per task, with the ceiling beside it; no section without costs', () => {
    const rows: Row[] = [
      { workload: '1. immediate 100', system: 'this library', figures: {}, cost: { tasks: 100, nodeCpuS: 0.001, redisCpuS: 0.002, calls: 140, sends: 3, pgCpuS: 0.004 } },
      { workload: '3. ordered', system: 'this library', figures: {}, cost: { tasks: 10, nodeCpuS: 0.0005, redisCpuS: 0.0001, calls: 34, sends: NaN } },
      { workload: '1. immediate 100', system: 'bullmq', figures: {} },
      { workload: '8. Redis ceiling (redis-benchmark)', system: 'redis-server', figures: { 'µs per call': '2.00' } },
    ];
    const lines = renderCosts(rows).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[2]).toBe('| 1. immediate 100 | this library | 100 | 10.0 | 20.0 | 1.4 | 0.03 | 10.0 | 40.0 |');
    expect(lines[3]).toBe('| 3. ordered | this library | 10 | 50.0 | 10.0 | 3.4 | n/a | 5.0 |  |');
    expect(costSection(rows)[0]).toBe('## Where the time goes, per task');
    expect(costSection([{ workload: 'w', system: 's', figures: {} }])).toEqual([]);
  });

  (single ? it : it.skip)('counts a send per socket write to Redis: ten awaited calls are ten, a pipeline of ten is one', async () => {
    const redis = new Redis(single!.connection as string);
    const other = new Redis(single!.connection as string);
    try {
      await Promise.all([redis.ping(), other.ping()]);
      let mark = await markCost(redis);
      for (let i = 0; i < 10; i++) await other.get(`cost-spec-${i}`);
      const oneByOne = await costSince(redis, mark, 10);
      expect(oneByOne.sends).toBe(10);
      expect(oneByOne.calls).toBeGreaterThanOrEqual(10);
      mark = await markCost(redis);
      const pipeline = other.pipeline();
      for (let i = 0; i < 10; i++) pipeline.get(`cost-spec-${i}`);
      await pipeline.exec();
      const piped = await costSince(redis, mark, 10);
      expect(piped.sends).toBe(1);
      expect(piped.calls).toBeGreaterThanOrEqual(10);
      expect(piped.redisCpuS).toBeGreaterThanOrEqual(0);
    } finally {
      redis.disconnect();
      other.disconnect();
    }
  });
});
