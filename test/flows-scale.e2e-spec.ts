/**
 * Flows (issue 30) at scale, against real Redis (single server and cluster): no-op handlers, concurrency 50.
 *
 * Failure matrix (each cell a test below):
 * | capability        | cell                                                                                     |
 * |-------------------|------------------------------------------------------------------------------------------|
 * | 10,000 nodes      | 100 parents each waiting for 99 children: every node starts once, each parent after its  |
 * |                   | children with their 99 results; the flow completes; getFlow reads all 10,000 nodes       |
 * | fan-in of 10,000  | one parent waiting for 10,000 children starts once, after the last, with 10,000 results  |
 * | a chain of 100,000 (25,000 on the cluster) whose root dies | the flow fails with every other node blocked, none run; no call of it over 50 ms in SLOWLOG (the cascade goes on 200 nodes a call, across levels: it took a call per level, about a minute for 100,000) |
 */
import 'reflect-metadata';
import type { Task } from 'nestjs-distributed-queue';
import { flowEnded, flowsOf, nodeWorker, type NodeRun } from './support/flow-nodes';
import { useQueueApps } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep } from './support/wait';
import { Logger } from '@nestjs/common';
import { connect } from './support/queue-app';
import { slowestSince, slowlogMarks } from './support/slowlog';

describe.each(getTargets().map((t) => [t.name, t] as const))('flows at scale on %s', (_name, target: RedisTarget) => {
  const { start } = useQueueApps(target);

  it('a flow of 10,000 nodes (100 parents of 99 children each) completes; getFlow reads every node', async () => {
    const runs: NodeRun[] = [];
    const Child = nodeWorker(runs, 'leaf', { concurrency: 50, pollIntervalMs: 200 }, (t: Task<{ n: number }>) => t.payload.n);
    const Parent = nodeWorker(runs, 'sum', { concurrency: 50, pollIntervalMs: 200 }, (t: Task) => {
      return (Object.values(t.flow!.results) as number[]).reduce((a, b) => a + b, 0);
    });
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-10k') }, [Child, Parent]);
    const flows = flowsOf(app);
    const nodes = [];
    for (let p = 0; p < 100; p++) {
      const children = Array.from({ length: 99 }, (_, c) => ({ ref: `c${p}.${c}`, type: 'leaf', payload: { n: c } }));
      nodes.push(...children, { ref: `p${p}`, type: 'sum', payload: {}, dependsOn: children.map((c) => c.ref) });
    }
    const { id } = await flows.submitFlow(nodes);
    const flow = await flowEnded(flows, id, 150_000, 1000);
    expect(flow.state).toBe('completed');
    expect(flow.counts).toEqual({ total: 10_000, completed: 10_000, dead: 0, cancelled: 0, blocked: 0 });
    expect(flow.nodes).toHaveLength(10_000);
    expect(new Set(flow.nodes.map((n) => n.ref)).size).toBe(10_000);
    expect(flow.nodes.every((n) => n.state === 'completed')).toBe(true);
    expect(flow.nodes.filter((n) => n.ref.startsWith('p')).map((n) => n.result)).toEqual(Array(100).fill((98 * 99) / 2));
    expect(runs).toHaveLength(10_000);
    expect(new Set(runs.map((r) => r.ref)).size).toBe(10_000);
    const ends = new Map(runs.map((r) => [r.ref, r.end!]));
    for (const parent of runs.filter((r) => r.type === 'sum')) {
      const p = parent.ref.slice(1);
      expect(Object.keys(parent.flow!.results)).toHaveLength(99);
      const lastChild = Math.max(...Array.from({ length: 99 }, (_, c) => ends.get(`c${p}.${c}`)!));
      expect(parent.start).toBeGreaterThanOrEqual(lastChild);
    }
  }, 200_000);

  it('a fan-in: one parent waiting for 10,000 children starts once, with 10,000 results', async () => {
    const runs: NodeRun[] = [];
    const Child = nodeWorker(runs, 'part', { concurrency: 50, pollIntervalMs: 200 }, (t: Task<{ n: number }>) => t.payload.n);
    const Parent = nodeWorker(runs, 'whole', {}, (t: Task) => Object.keys(t.flow!.results).length);
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-fanin') }, [Child, Parent]);
    const flows = flowsOf(app);
    const children = Array.from({ length: 10_000 }, (_, n) => ({ ref: `c${n}`, type: 'part', payload: { n } }));
    const { id } = await flows.submitFlow([...children, { ref: 'top', type: 'whole', payload: {}, dependsOn: children.map((c) => c.ref) }]);
    const flow = await flowEnded(flows, id, 150_000, 1000);
    await sleep(300);
    expect(flow.state).toBe('completed');
    expect(flow.counts.completed).toBe(10_001);
    const top = runs.filter((r) => r.ref === 'top');
    expect(top).toHaveLength(1);
    const results = top[0].flow!.results as Record<string, number>;
    expect(Object.keys(results)).toHaveLength(10_000);
    expect(Object.entries(results).every(([ref, n]) => ref === `c${n}`)).toBe(true);
    expect(top[0].start).toBeGreaterThanOrEqual(Math.max(...runs.filter((r) => r.type === 'part').map((r) => r.end!)));
    expect(flow.nodes.find((n) => n.ref === 'top')!.result).toBe(10_000);
  }, 200_000);

  it('a chain of 100,000 nodes (25,000 on the cluster) whose root dies: the flow fails, every other node blocked, no call over 50 ms', async () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const n = target.name === 'cluster' ? 25_000 : 100_000;
    const runs: NodeRun[] = [];
    const Link = nodeWorker(runs, 'link', { maxAttempts: 1 }, () => {
      throw new Error('the root dies');
    });
    const keyPrefix = uniquePrefix('flow-chain');
    const app = await start({ connection: target.connection, keyPrefix }, [Link]);
    const flows = flowsOf(app);
    const client = connect(target);
    try {
      const marks = await slowlogMarks(client);
      const { id } = await flows.submitFlow(Array.from({ length: n }, (_, i) => ({ ref: `n${i}`, type: 'link', payload: {}, dependsOn: i === 0 ? [] : [`n${i - 1}`] })));
      const flow = await flowEnded(flows, id, 240_000, 500);
      expect(flow.state).toBe('failed');
      expect(flow.counts).toEqual({ total: n, completed: 0, dead: 1, cancelled: 0, blocked: n - 1 });
      expect(runs.map((r) => r.ref)).toEqual(['n0']);
      expect(await slowestSince(client, marks, keyPrefix)).toBeLessThan(50);
    } finally {
      client.disconnect();
      jest.restoreAllMocks();
    }
  }, 300_000);
});
