/**
 * Groups at the issue's size (issue 29): one group of 1,000,000 tasks beside 50 groups of one, on the single
 * server (one type lives on one master either way). Cell: the big group drains, the small groups' tasks start
 * first (all within the first starts), and no group is left. Its console line reports submit and run rates
 * and Redis's memory at the peak (about 250 bytes per grouped task).
 */
import 'reflect-metadata';
import { TaskGroupsService, type Task } from 'nestjs-distributed-queue';
import { useQueueApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const target = getTargets()[0];
describe('groups at scale: one group of 1,000,000', () => {
  const { start, redis } = useQueueApps(target);
  it('drains, the small groups first', async () => {
    const prefix = uniquePrefix('grp-million');
    const app = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { gm1: {} } });
    const t0 = Date.now();
    for (let i = 0; i < 1_000_000; i += 5000) {
      await app.submit.submitMany('gm1', Array.from({ length: 5000 }, (_, j) => ({ payload: 0, group: 'big', id: `b${i + j}` })));
    }
    const submitted = Date.now() - t0;
    await app.submit.submitMany('gm1', Array.from({ length: 50 }, (_, i) => ({ id: `s${i}`, payload: 1, group: `s${i}` })));
    const mem = String(await redis().info('memory')).match(/used_memory:(\d+)/)![1];
    const order: string[] = [];
    let done = 0;
    const W = workerClass('gm1', { concurrency: 100 }, (t: Task) => { if (order.length < 5000) order.push(t.id); done++; });
    const t1 = Date.now();
    await start({ connection: target.connection, keyPrefix: prefix }, [W]);
    await waitFor(() => done >= 1_000_050, { timeoutMs: 300_000, intervalMs: 200 });
    const ran = Date.now() - t1;
    const small = order.map((id, i) => (id.startsWith('s') ? i : -1)).filter((i) => i >= 0);
    console.log(`[million] submit ${submitted} ms, used_memory ${mem}, run ${ran} ms (${Math.round(1_000_050 / (ran / 1000))}/s), small at starts ${Math.min(...small)}..${Math.max(...small)} (${small.length})`);
    expect(small).toHaveLength(50);
    expect(Math.max(...small)).toBeLessThan(1200);
    expect((await app.app.get(TaskGroupsService).getGroups('gm1')).total).toBe(0);
  }, 400_000);
});
