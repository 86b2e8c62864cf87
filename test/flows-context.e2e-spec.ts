/**
 * Flows (issue 30): what a node's worker reads of its dependencies before its handler (`task.flow`), and the
 * read it skips: a node whose dependencies left no result and no error is released without the mark that
 * makes its worker read them (flow-release-5.lua), so it starts one call sooner. Counted with MONITOR (calls of
 * the context script), on the single server and the cluster.
 *
 * | cell                                   | what is checked                                                 |
 * |----------------------------------------|-----------------------------------------------------------------|
 * | no dependency left anything            | the dependent's task.flow has empty results and failed, no read |
 * | one dependency of three left a result  | its result read (one read), the others absent                   |
 * | a dependency died under 'ignore'       | its error read (failed), the dependent ran                      |
 * | the payload a node released bare gets  | unchanged (the mark is not part of it), also one beginning '&'  |
 */
import 'reflect-metadata';
import { createHash } from 'crypto';
import type { Task } from 'nestjs-distributed-queue';
import { loadScripts } from 'nestjs-distributed-queue/redis/script-loader';
import { flowEnded, flowsOf, nodeWorker, runsOf, type NodeRun } from './support/flow-nodes';
import { portsOf } from './support/pinger';
import { useQueueApps } from './support/queue-app';
import { monitorCalls } from './support/redis-stats';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';

const CONTEXT_LUA = loadScripts().find((s) => s.command === 'dqFlowContext')!.lua;
const CONTEXT_SHA = createHash('sha1').update(CONTEXT_LUA).digest('hex');
/** A line of the context script's body (EVAL shows it). */
const CONTEXT_TEXT = 'reads of its dependencies';

describe.each(getTargets().map((t) => [t.name, t] as const))('flow context reads on %s', (_name, target: RedisTarget) => {
  const { start } = useQueueApps(target);

  /** Runs one flow (handlers return `results[ref]`, or throw when it is 'die') and counts the context reads. */
  async function run(label: string, nodes: Parameters<ReturnType<typeof flowsOf>['submitFlow']>[0], results: Record<string, unknown>) {
    const runs: NodeRun[] = [];
    const W = nodeWorker(runs, 'cx', { maxAttempts: 1 }, (t: Task<unknown>) => {
      if (results[t.flow!.ref] === 'die') throw new Error(`${t.flow!.ref} died`);
      return results[t.flow!.ref];
    });
    const prefix = uniquePrefix(label);
    const app = await start({ connection: target.connection, keyPrefix: prefix }, [W]);
    const flows = flowsOf(app);
    // NOTE: a connection's first call of a script is EVAL with its body, the later ones EVALSHA; the servers
    // are shared with other test files: this test's keys only
    const ports = portsOf(target);
    const counts = [await monitorCalls(ports, 'evalsha', [CONTEXT_SHA, prefix]), await monitorCalls(ports, 'eval', [CONTEXT_TEXT, prefix])];
    const { id } = await flows.submitFlow(nodes);
    const flow = await flowEnded(flows, id);
    const reads = (await Promise.all(counts.map((c) => c.stop()))).reduce((a, b) => a + b, 0);
    return { runs, flow, reads, app };
  }

  it('no dependency left a result or an error: the dependent reads nothing (no call) and starts with empty results', async () => {
    const { runs, flow, reads } = await run('flow-cx-none', [
      { ref: 'a', type: 'cx', payload: {} }, { ref: 'b', type: 'cx', payload: {} }, { ref: 'c', type: 'cx', payload: {} },
      { ref: 'top', type: 'cx', payload: { keep: [1, 2] }, priority: 3, dependsOn: ['a', 'b', 'c'] },
    ], {});
    expect(flow.state).toBe('completed');
    const [top] = runsOf(runs, 'top');
    expect(top.flow).toMatchObject({ ref: 'top', results: {}, failed: {} });
    expect(reads).toBe(0);
  });

  it('one dependency of three left a result: it is read (one call), the others are absent', async () => {
    const { runs, flow, reads } = await run('flow-cx-one', [
      { ref: 'a', type: 'cx', payload: {} }, { ref: 'b', type: 'cx', payload: {} }, { ref: 'c', type: 'cx', payload: {} },
      { ref: 'top', type: 'cx', payload: {}, dependsOn: ['a', 'b', 'c'] },
    ], { b: { total: 42 } });
    expect(flow.state).toBe('completed');
    expect(runsOf(runs, 'top')[0].flow).toMatchObject({ results: { b: { total: 42 } }, failed: {} });
    expect(reads).toBe(1);
  });

  it("a dependency that died under 'ignore': its error is read, the dependent runs", async () => {
    const { runs, flow, reads } = await run('flow-cx-ignore', [
      { ref: 'a', type: 'cx', payload: {}, onFailure: 'ignore' }, { ref: 'b', type: 'cx', payload: {} },
      { ref: 'top', type: 'cx', payload: {}, dependsOn: ['a', 'b'] },
    ], { a: 'die' });
    expect(flow.state).toBe('completed');
    expect(runsOf(runs, 'top')[0].flow).toMatchObject({ results: {}, failed: { a: { message: 'a died' } } });
    expect(reads).toBe(1);
  });

  it('a node released without the mark keeps its payload (one that begins with & too)', async () => {
    const runs: NodeRun[] = [];
    const seen: unknown[] = [];
    const W = nodeWorker(runs, 'cx', {}, (t: Task<unknown>) => void seen.push([t.flow!.ref, t.payload]));
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-cx-payload') }, [W]);
    const flows = flowsOf(app);
    const { id } = await flows.submitFlow([
      { ref: 'a', type: 'cx', payload: 'x' },
      { ref: 'top', type: 'cx', payload: { '&': '&still', n: 1 }, priority: 7, dependsOn: ['a'] },
      { ref: 'tail', type: 'cx', payload: '&starts-with-amp', dependsOn: ['top'] },
    ]);
    expect((await flowEnded(flows, id)).state).toBe('completed');
    expect(seen).toEqual([['a', 'x'], ['top', { '&': '&still', n: 1 }], ['tail', '&starts-with-amp']]);
  });
});
