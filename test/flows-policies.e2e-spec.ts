/**
 * Flows (issue 30): what a dead node's dependents do (onFailure), and a re-drive resuming the flow, against
 * real Redis (single server and cluster). A node dies on its only attempt (maxAttempts 1, its handler throws).
 *
 * Failure matrix (each cell a test below):
 * | capability                 | cell                                                                          |
 * |----------------------------|-------------------------------------------------------------------------------|
 * | onFailure 'fail' (default) | its dependent never runs (getFlow 'blocked'), an independent branch still     |
 * |                            | runs, the flow ends 'failed' once nothing else can run; counts                |
 * | 'fail', transitive         | a chain and a fan below the dead node: grandchildren blocked too              |
 * | onFailure 'ignore'         | its dependent runs, task.flow.failed has the error, results the others'; the  |
 * |                            | flow ends 'completed'                                                         |
 * | onFailure 'continue'       | its dependents (and theirs) blocked, an independent branch completes, the     |
 * |                            | flow ends 'completed'                                                         |
 * | re-drive resumes           | after 'fail', redriveDead(type, [id]) with a handler that now succeeds: the   |
 * |                            | blocked dependents run (once) and the flow ends 'completed'                   |
 * | re-drive under 'continue'  | the flow had completed with a blocked node: it runs once the re-driven node   |
 * |                            | completes, every node completed                                               |
 * | re-drive under 'ignore'    | after its dependent ran without it: the node completes, the dependent does    |
 * |                            | not run again, the counts end 2 completed, 0 dead                             |
 * | retried, not dead          | a node failing its first attempt and completing its second: its dependent     |
 * |                            | runs once with the result; nothing counted dead                               |
 */
import 'reflect-metadata';
import type { FlowInfo, FlowNode, Task } from 'nestjs-distributed-queue';
import { flowEnded, flowWhere, flowsOf, nodeOf, nodeWorker, runsOf, type NodeRun } from './support/flow-nodes';
import { useQueueApps } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

interface Step { ms?: number; die?: boolean }

describe.each(getTargets().map((t) => [t.name, t] as const))('flow failure policies on %s', (_name, target: RedisTarget) => {
  const { start } = useQueueApps(target);

  /** An app with one type 'step': its handler sleeps `ms`, throws when `die` (or `dying(ref)`), returns its ref. */
  async function policyApp(label: string, dying: (ref: string) => boolean = () => false) {
    const runs: NodeRun[] = [];
    const W = nodeWorker(runs, 'step', { concurrency: 4, maxAttempts: 1 }, async (t: Task<Step>) => {
      if (t.payload.ms) await sleep(t.payload.ms);
      if (t.payload.die || dying(t.flow!.ref)) throw new Error(`${t.flow!.ref} broke`);
      return `${t.flow!.ref}-done`;
    });
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix(label) }, [W]);
    return { app, flows: flowsOf(app), runs };
  }

  /** A flow whose node 'flaky' dies until `redrive` mends its handler, re-drives it and waits until `until`. */
  async function flakyFlow(label: string, nodes: FlowNode[]) {
    let broken = true;
    const { app, flows, runs } = await policyApp(label, (ref) => ref === 'flaky' && broken);
    const { id, nodes: tasks } = await flows.submitFlow(nodes);
    const ended = await flowEnded(flows, id);
    const redrive = async (until: (flow: FlowInfo) => boolean) => {
      broken = false;
      expect(await app.inspect.redriveDead('step', [tasks.flaky.id])).toBe(1);
      return flowWhere(flows, id, until);
    };
    return { runs, ended, redrive };
  }

  it("'fail': the dependent never runs, an independent branch still runs, the flow ends failed", async () => {
    const { flows, runs } = await policyApp('flow-pol-fail');
    const { id } = await flows.submitFlow([
      { ref: 'dies', type: 'step', payload: { die: true } },
      { ref: 'child', type: 'step', payload: {}, dependsOn: ['dies'] },
      { ref: 'solo', type: 'step', payload: { ms: 1500 } },
    ]);
    // NOTE: the flow learns a death just after its burial (the task reads 'dead' a moment before its
    // dependents read 'blocked'): wait for the flow's side.
    await waitFor(async () => nodeOf((await flows.getFlow(id))!, 'child').state === 'blocked', { timeoutMs: 10_000 });
    const mid = (await flows.getFlow(id))!;
    expect(mid.state).toBe('running'); // 'solo' can still run
    expect(nodeOf(mid, 'dies').state).toBe('dead');
    const flow = await flowEnded(flows, id);
    expect(flow.state).toBe('failed');
    expect(flow.endedAt).toBeGreaterThanOrEqual(flow.createdAt);
    expect(flow.counts).toEqual({ total: 3, completed: 1, dead: 1, cancelled: 0, blocked: 1 });
    expect(nodeOf(flow, 'dies')).toMatchObject({ state: 'dead', onFailure: 'fail', error: { name: 'Error', message: 'dies broke', attempts: 1 } });
    expect(nodeOf(flow, 'child').state).toBe('blocked');
    expect(nodeOf(flow, 'solo')).toMatchObject({ state: 'completed', result: 'solo-done' });
    await sleep(300);
    expect(runs.map((r) => r.ref).sort()).toEqual(['dies', 'solo']);
  });

  it("'fail', transitive: the chain and the fan below the dead node are blocked, grandchildren too", async () => {
    const { flows, runs } = await policyApp('flow-pol-trans');
    const { id } = await flows.submitFlow([
      { ref: 'root', type: 'step', payload: {} },
      { ref: 'dies', type: 'step', payload: { die: true }, dependsOn: ['root'] },
      { ref: 'c1', type: 'step', payload: {}, dependsOn: ['dies'] },
      { ref: 'c2', type: 'step', payload: {}, dependsOn: ['dies'] },
      { ref: 'g1', type: 'step', payload: {}, dependsOn: ['c1', 'c2'] },
      { ref: 'gg', type: 'step', payload: {}, dependsOn: ['g1'] },
      { ref: 'side', type: 'step', payload: {}, dependsOn: ['root'] },
      { ref: 'mixed', type: 'step', payload: {}, dependsOn: ['side', 'c2'] },
    ]);
    const flow = await flowEnded(flows, id);
    expect(flow.state).toBe('failed');
    expect(flow.counts).toEqual({ total: 8, completed: 2, dead: 1, cancelled: 0, blocked: 5 });
    for (const ref of ['c1', 'c2', 'g1', 'gg', 'mixed']) expect([ref, nodeOf(flow, ref).state]).toEqual([ref, 'blocked']);
    await sleep(300);
    expect(runs.map((r) => r.ref).sort()).toEqual(['dies', 'root', 'side']);
  });

  it("'ignore': the dependent runs with the error in task.flow.failed, and the flow completes", async () => {
    const { flows, runs } = await policyApp('flow-pol-ignore');
    const { id } = await flows.submitFlow([
      { ref: 'dies', type: 'step', payload: { die: true }, onFailure: 'ignore' },
      { ref: 'ok', type: 'step', payload: {} },
      { ref: 'child', type: 'step', payload: {}, dependsOn: ['dies', 'ok'] },
      { ref: 'grand', type: 'step', payload: {}, dependsOn: ['child'] },
    ]);
    const flow = await flowEnded(flows, id);
    expect(flow.state).toBe('completed');
    expect(flow.counts).toEqual({ total: 4, completed: 3, dead: 1, cancelled: 0, blocked: 0 });
    const [child] = runsOf(runs, 'child');
    expect(child.flow!.results).toEqual({ ok: 'ok-done' });
    expect(child.flow!.failed).toEqual({ dies: expect.objectContaining({ name: 'Error', message: 'dies broke', attempts: 1 }) });
    expect(child.start).toBeGreaterThanOrEqual(runsOf(runs, 'dies')[0].end!);
    expect(nodeOf(flow, 'dies')).toMatchObject({ state: 'dead', onFailure: 'ignore' });
    expect(runsOf(runs, 'grand')[0].flow).toEqual({ id, ref: 'grand', results: { child: 'child-done' }, failed: {} });
  });

  it("'continue': the dependents are blocked, an independent branch completes, the flow ends completed", async () => {
    const { flows, runs } = await policyApp('flow-pol-cont');
    const { id } = await flows.submitFlow([
      { ref: 'dies', type: 'step', payload: { die: true }, onFailure: 'continue' },
      { ref: 'child', type: 'step', payload: {}, dependsOn: ['dies'] },
      { ref: 'grand', type: 'step', payload: {}, dependsOn: ['child'] },
      { ref: 'x', type: 'step', payload: { ms: 300 } },
      { ref: 'y', type: 'step', payload: {}, dependsOn: ['x'] },
    ]);
    const flow = await flowEnded(flows, id);
    expect(flow.state).toBe('completed');
    expect(flow.counts).toEqual({ total: 5, completed: 2, dead: 1, cancelled: 0, blocked: 2 });
    expect(nodeOf(flow, 'child').state).toBe('blocked');
    expect(nodeOf(flow, 'grand').state).toBe('blocked');
    expect(nodeOf(flow, 'y')).toMatchObject({ state: 'completed', result: 'y-done' });
    await sleep(300);
    expect(runs.map((r) => r.ref).sort()).toEqual(['dies', 'x', 'y']);
  });

  it("re-drive resumes: after 'fail', the dead node re-driven and now succeeding runs its dependents and completes the flow", async () => {
    const { runs, ended, redrive } = await flakyFlow('flow-pol-redrive', [
      { ref: 'flaky', type: 'step', payload: {} },
      { ref: 'child', type: 'step', payload: {}, dependsOn: ['flaky'] },
      { ref: 'grand', type: 'step', payload: {}, dependsOn: ['child'] },
    ]);
    expect(ended.state).toBe('failed');
    expect(ended.counts).toEqual({ total: 3, completed: 0, dead: 1, cancelled: 0, blocked: 2 });
    const flow = await redrive((f) => f.state === 'completed');
    expect(flow.counts).toEqual({ total: 3, completed: 3, dead: 0, cancelled: 0, blocked: 0 });
    expect(nodeOf(flow, 'flaky')).toMatchObject({ state: 'completed', result: 'flaky-done' });
    expect('error' in nodeOf(flow, 'flaky')).toBe(false);
    await sleep(300);
    expect(runs.map((r) => r.ref)).toEqual(['flaky', 'flaky', 'child', 'grand']);
    expect(runsOf(runs, 'child')[0].flow!.results).toEqual({ flaky: 'flaky-done' });
  });

  it("re-drive under 'continue': the blocked dependents run once the dead node completes", async () => {
    const { runs, ended, redrive } = await flakyFlow('flow-pol-redrive-cont', [
      { ref: 'flaky', type: 'step', payload: {}, onFailure: 'continue' },
      { ref: 'child', type: 'step', payload: {}, dependsOn: ['flaky'] },
      { ref: 'other', type: 'step', payload: {} },
    ]);
    expect(ended.state).toBe('completed');
    expect(ended.counts).toEqual({ total: 3, completed: 1, dead: 1, cancelled: 0, blocked: 1 });
    const flow = await redrive((f) => f.counts.completed === 3 && f.state === 'completed');
    expect(flow.counts).toEqual({ total: 3, completed: 3, dead: 0, cancelled: 0, blocked: 0 });
    await sleep(300);
    expect(runsOf(runs, 'child')).toHaveLength(1);
    expect(runsOf(runs, 'child')[0].flow!.results).toEqual({ flaky: 'flaky-done' });
  });

  it('a node that fails its first attempt and completes its second is not dead: its dependent runs once', async () => {
    const runs: NodeRun[] = [];
    let failures = 0;
    const W = nodeWorker(runs, 'retry', { maxAttempts: 3, backoff: { type: 'fixed', delayMs: 100 } }, (t: Task) => {
      if (t.flow!.ref === 'flaky' && failures++ === 0) throw new Error('first attempt');
      return t.attempt;
    });
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-pol-retry') }, [W]);
    const flows = flowsOf(app);
    const { id } = await flows.submitFlow([
      { ref: 'flaky', type: 'retry', payload: {} },
      { ref: 'child', type: 'retry', payload: {}, dependsOn: ['flaky'] },
    ]);
    const flow = await flowEnded(flows, id);
    await sleep(300);
    expect(flow.state).toBe('completed');
    expect(flow.counts).toEqual({ total: 2, completed: 2, dead: 0, cancelled: 0, blocked: 0 });
    expect(runs.map((r) => r.ref)).toEqual(['flaky', 'flaky', 'child']);
    expect(runsOf(runs, 'child')[0].flow!.results).toEqual({ flaky: 2 });
  });

  it("re-drive under 'ignore' after its dependent ran: the node completes, the dependent does not run again", async () => {
    const { runs, ended, redrive } = await flakyFlow('flow-pol-redrive-ign', [
      { ref: 'flaky', type: 'step', payload: {}, onFailure: 'ignore' },
      { ref: 'child', type: 'step', payload: {}, dependsOn: ['flaky'] },
    ]);
    expect(ended.counts).toEqual({ total: 2, completed: 1, dead: 1, cancelled: 0, blocked: 0 });
    const flow = await redrive((f) => f.counts.completed === 2 && f.state === 'completed');
    await sleep(500);
    expect(flow.counts).toEqual({ total: 2, completed: 2, dead: 0, cancelled: 0, blocked: 0 });
    expect(runs.map((r) => r.ref)).toEqual(['flaky', 'child', 'flaky']);
  });
});
