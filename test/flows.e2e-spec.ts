/**
 * Flows (issue 30): tasks that wait for other tasks, against real Redis (single server and cluster).
 */
import 'reflect-metadata';
import { TaskFlowService, type Task } from 'nestjs-distributed-queue';
import { useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('flows on %s', (_name, target: RedisTarget) => {
  const { start } = useQueueApps(target);

  it('a parent starts after its 3 children completed, and reads their results', async () => {
    const prefix = uniquePrefix('flow-basic');
    const runs: Task[] = [];
    const Child = workerClass('price', { concurrency: 4, pollIntervalMs: 100 }, (t: Task<{ n: number }>) => {
      runs.push(t);
      return { price: t.payload.n * 10 };
    });
    const Parent = workerClass('invoice', { pollIntervalMs: 100 }, (t: Task) => {
      runs.push(t);
      return 'sent';
    });
    const app = await start({ connection: target.connection, keyPrefix: prefix }, [Child, Parent]);
    const flows = app.app.get(TaskFlowService);
    const { id } = await flows.submitFlow([
      { ref: 'a', type: 'price', payload: { n: 1 } },
      { ref: 'b', type: 'price', payload: { n: 2 } },
      { ref: 'c', type: 'price', payload: { n: 3 } },
      { ref: 'inv', type: 'invoice', payload: {}, dependsOn: ['a', 'b', 'c'] },
    ]);
    await waitFor(async () => (await flows.getFlow(id))?.state === 'completed', { timeoutMs: 10_000 });
    const parent = runs.find((r) => r.type === 'invoice')!;
    expect(parent.flow).toEqual({ id, ref: 'inv', results: { a: { price: 10 }, b: { price: 20 }, c: { price: 30 } }, failed: {} });
    const flow = (await flows.getFlow(id))!;
    expect(flow.counts).toEqual({ total: 4, completed: 4, dead: 0, cancelled: 0, blocked: 0 });
    expect(flow.nodes.find((n) => n.ref === 'inv')).toMatchObject({ state: 'completed', result: 'sent', dependsOn: ['a', 'b', 'c'] });
  });
});
