/**
 * Flows (issue 30): tasks that wait for other tasks, against real Redis (single server and cluster).
 * Progression and results; the other cells of the flows' matrix are in test/flows-*.e2e-spec.ts.
 *
 * Failure matrix (each cell a test below):
 * | capability                 | cell                                                                          |
 * |----------------------------|-------------------------------------------------------------------------------|
 * | fan-in                     | a parent starts after its 3 children completed and reads their results        |
 * | diamond (a->b, a->c, b,c->d)| d starts once, after b and c completed, and sees both results                |
 * | chain of 3                 | each node starts after the one before it completed and reads its result       |
 * | delay on a node            | it starts at least `delay` ms after its last dependency completed; a root     |
 * |                            | with a delay at least `delay` ms after the submit                             |
 * | result too large           | > flows.maxResultBytes: the node fails with FlowResultError (dead under        |
 * |                            | maxAttempts 1), its dependents blocked, the flow failed                       |
 * | result undefined           | no key in the dependent's results, no `result` in getFlow                     |
 */
import 'reflect-metadata';
import type { Task } from 'nestjs-distributed-queue';
import { flowEnded, flowsOf, nodeOf, nodeWorker, runsOf, type NodeRun } from './support/flow-nodes';
import { useQueueApps } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('flows on %s', (_name, target: RedisTarget) => {
  const { start } = useQueueApps(target);

  it('a parent starts after its 3 children completed, and reads their results', async () => {
    const runs: NodeRun[] = [];
    const Child = nodeWorker(runs, 'price', { concurrency: 4 }, (t: Task<{ n: number }>) => ({ price: t.payload.n * 10 }));
    const Parent = nodeWorker(runs, 'invoice', {}, () => 'sent');
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-basic') }, [Child, Parent]);
    const flows = flowsOf(app);
    const { id } = await flows.submitFlow([
      { ref: 'a', type: 'price', payload: { n: 1 } },
      { ref: 'b', type: 'price', payload: { n: 2 } },
      { ref: 'c', type: 'price', payload: { n: 3 } },
      { ref: 'inv', type: 'invoice', payload: {}, dependsOn: ['a', 'b', 'c'] },
    ]);
    const flow = await flowEnded(flows, id);
    expect(flow.state).toBe('completed');
    const [parent] = runsOf(runs, 'inv');
    expect(parent.flow).toEqual({ id, ref: 'inv', results: { a: { price: 10 }, b: { price: 20 }, c: { price: 30 } }, failed: {} });
    expect(parent.start).toBeGreaterThanOrEqual(Math.max(...['a', 'b', 'c'].map((r) => runsOf(runs, r)[0].end!)));
    expect(flow.counts).toEqual({ total: 4, completed: 4, dead: 0, cancelled: 0, blocked: 0 });
    expect(nodeOf(flow, 'inv')).toMatchObject({ state: 'completed', result: 'sent', dependsOn: ['a', 'b', 'c'] });
  });

  it('a diamond: d starts once, after b and c completed, and sees both results', async () => {
    const runs: NodeRun[] = [];
    const W = nodeWorker(runs, 'dia', { concurrency: 4 }, async (t: Task<{ ms: number }>) => {
      await sleep(t.payload.ms);
      return `${t.flow!.ref}:${Object.keys(t.flow!.results).sort().join('+')}`;
    });
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-diamond') }, [W]);
    const flows = flowsOf(app);
    const { id } = await flows.submitFlow([
      { ref: 'd', type: 'dia', payload: { ms: 0 }, dependsOn: ['b', 'c'] },
      { ref: 'b', type: 'dia', payload: { ms: 300 }, dependsOn: ['a'] },
      { ref: 'c', type: 'dia', payload: { ms: 20 }, dependsOn: ['a'] },
      { ref: 'a', type: 'dia', payload: { ms: 0 } },
    ]);
    const flow = await flowEnded(flows, id);
    await sleep(300); // a second start of d would show here
    expect(flow.state).toBe('completed');
    expect(runs.map((r) => r.ref).sort()).toEqual(['a', 'b', 'c', 'd']);
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((r) => runsOf(runs, r)[0]);
    expect(Math.min(b.start, c.start)).toBeGreaterThanOrEqual(a.end!);
    expect(d.start).toBeGreaterThanOrEqual(Math.max(b.end!, c.end!));
    expect(d.flow!.results).toEqual({ b: 'b:a', c: 'c:a' });
    expect(nodeOf(flow, 'd').result).toBe('d:b+c');
  });

  it('a chain of 3: each node starts after the one before it completed and reads its result', async () => {
    const runs: NodeRun[] = [];
    const W = nodeWorker(runs, 'link', { concurrency: 3 }, (t: Task<{ n: number }>) => {
      const before = Object.values(t.flow!.results) as number[];
      return (before[0] ?? 0) + t.payload.n;
    });
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-chain') }, [W]);
    const flows = flowsOf(app);
    const { id } = await flows.submitFlow([
      { ref: 'one', type: 'link', payload: { n: 1 } },
      { ref: 'two', type: 'link', payload: { n: 10 }, dependsOn: ['one'] },
      { ref: 'three', type: 'link', payload: { n: 100 }, dependsOn: ['two'] },
    ]);
    const flow = await flowEnded(flows, id);
    expect(flow.state).toBe('completed');
    expect(runs.map((r) => r.ref)).toEqual(['one', 'two', 'three']);
    expect(runs[1].start).toBeGreaterThanOrEqual(runs[0].end!);
    expect(runs[2].start).toBeGreaterThanOrEqual(runs[1].end!);
    expect(runs[2].flow!.results).toEqual({ two: 11 });
    expect(flow.nodes.map((n) => [n.ref, n.result])).toEqual(expect.arrayContaining([['one', 1], ['two', 11], ['three', 111]]));
  });

  it('a node with a delay starts at least `delay` ms after its last dependency completed', async () => {
    const runs: NodeRun[] = [];
    const W = nodeWorker(runs, 'slow', { concurrency: 4 }, (t: Task<{ ms: number }>) => sleep(t.payload.ms));
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-delay') }, [W]);
    const flows = flowsOf(app);
    const submittedBefore = Date.now();
    const { id } = await flows.submitFlow([
      { ref: 'quick', type: 'slow', payload: { ms: 0 } },
      { ref: 'last', type: 'slow', payload: { ms: 400 } },
      { ref: 'later', type: 'slow', payload: { ms: 0 }, dependsOn: ['quick', 'last'], delay: 800 },
      { ref: 'root', type: 'slow', payload: { ms: 0 }, delay: 600 },
    ]);
    const flow = await flowEnded(flows, id);
    expect(flow.state).toBe('completed');
    const last = runsOf(runs, 'last')[0];
    const later = runsOf(runs, 'later');
    expect(later).toHaveLength(1);
    // 2 ms: Redis's clock in whole milliseconds
    expect(later[0].start - last.end!).toBeGreaterThanOrEqual(800 - 2);
    // a root's delay counts from the submit
    expect(runsOf(runs, 'root')[0].start - submittedBefore).toBeGreaterThanOrEqual(600 - 2);
  });

  it('a result larger than flows.maxResultBytes fails the node with FlowResultError; its dependents are blocked', async () => {
    const runs: NodeRun[] = [];
    const Big = nodeWorker(runs, 'big', { maxAttempts: 1 }, () => ({ text: 'x'.repeat(300) }));
    const Next = nodeWorker(runs, 'next', {}, () => 'ran');
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-bigres'), flows: { maxResultBytes: 256 } }, [Big, Next]);
    const flows = flowsOf(app);
    const { id, nodes } = await flows.submitFlow([
      { ref: 'big', type: 'big', payload: {} },
      { ref: 'next', type: 'next', payload: {}, dependsOn: ['big'] },
      { ref: 'after', type: 'next', payload: {}, dependsOn: ['next'] },
    ]);
    const flow = await flowEnded(flows, id);
    expect(flow.state).toBe('failed');
    expect(nodeOf(flow, 'big')).toMatchObject({ state: 'dead', error: { name: 'FlowResultError', attempts: 1 } });
    expect(nodeOf(flow, 'big').error!.message).toMatch(/256/);
    expect(nodeOf(flow, 'next').state).toBe('blocked');
    expect(nodeOf(flow, 'after').state).toBe('blocked');
    expect(flow.counts).toEqual({ total: 3, completed: 0, dead: 1, cancelled: 0, blocked: 2 });
    const task = await app.inspect.getTask('big', nodes.big.id);
    expect(task.state).toBe('dead');
    expect(task.lastError?.name).toBe('FlowResultError');
    await sleep(300);
    expect(runs.map((r) => r.ref)).toEqual(['big']);
  });

  it('a node that returns undefined leaves no key in its dependents\' results and no result in getFlow', async () => {
    const runs: NodeRun[] = [];
    const W = nodeWorker(runs, 'maybe', { concurrency: 2 }, (t: Task<{ v?: number }>) => t.payload.v);
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-undef') }, [W]);
    const flows = flowsOf(app);
    const { id } = await flows.submitFlow([
      { ref: 'none', type: 'maybe', payload: {} },
      { ref: 'zero', type: 'maybe', payload: { v: 0 } },
      { ref: 'top', type: 'maybe', payload: {}, dependsOn: ['none', 'zero'] },
    ]);
    const flow = await flowEnded(flows, id);
    expect(flow.state).toBe('completed');
    expect(runsOf(runs, 'top')[0].flow).toEqual({ id, ref: 'top', results: { zero: 0 }, failed: {} });
    expect('result' in nodeOf(flow, 'none')).toBe(false);
    expect(nodeOf(flow, 'zero').result).toBe(0);
  });
});
