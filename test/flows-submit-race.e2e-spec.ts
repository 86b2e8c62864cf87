/**
 * Flows (issue 30): one flow id submitted by racing callers, against real Redis (single server and cluster).
 *
 * Failure matrix (each cell a test below):
 * | capability               | cell                                                                            |
 * |--------------------------|---------------------------------------------------------------------------------|
 * | one id, 5 racing submits | from two applications at once: exactly one returns created: true, every node    |
 * |                          | runs once, the flow completes once (one end event in all)                       |
 * | the id after its end     | submitted again once the flow completed: created: false, nothing runs again,    |
 * |                          | the record unchanged                                                            |
 */
import 'reflect-metadata';
import type { FlowEndedEvent, FlowNode } from 'nestjs-distributed-queue';
import { flowEnded, flowsOf, nodeWorker, type NodeRun } from './support/flow-nodes';
import { useQueueApps } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep } from './support/wait';

/** A diamond over 40 middle nodes: root -> m0..m39 -> top. */
const DIAMOND: FlowNode[] = [
  { ref: 'root', type: 'sr', payload: {} },
  ...Array.from({ length: 40 }, (_, i) => ({ ref: `m${i}`, type: 'sr', payload: { i }, dependsOn: ['root'] })),
  { ref: 'top', type: 'sr', payload: {}, dependsOn: Array.from({ length: 40 }, (_, i) => `m${i}`) },
];

describe.each(getTargets().map((t) => [t.name, t] as const))('racing submits of one flow id on %s', (_name, target: RedisTarget) => {
  const { start } = useQueueApps(target);

  it('5 submits of one id from two applications at once: one created, each node runs once, one end', async () => {
    const prefix = uniquePrefix('flow-submit-race');
    const runs: NodeRun[] = [];
    const apps = await Promise.all([0, 1].map(() => start({ connection: target.connection, keyPrefix: prefix }, [nodeWorker(runs, 'sr', { concurrency: 8, pollIntervalMs: 20 }, (t) => t.flow!.ref)])));
    const events: FlowEndedEvent[] = [];
    for (const app of apps) flowsOf(app).onFlowEnded((e) => void events.push(e));
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => flowsOf(apps[i % 2]).submitFlow(DIAMOND, { id: 'race-1' })));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.nodes.top.id))).toEqual(new Set(['&race-1:top']));
    const flow = await flowEnded(flowsOf(apps[0]), 'race-1');
    await sleep(500);
    expect(flow.state).toBe('completed');
    expect(flow.counts).toEqual({ total: 42, completed: 42, dead: 0, cancelled: 0, blocked: 0 });
    expect(runs).toHaveLength(42);
    expect(new Set(runs.map((r) => r.ref)).size).toBe(42);
    expect(Object.keys(runs.find((r) => r.ref === 'top')!.flow!.results)).toHaveLength(40);
    expect(events.map((e) => [e.flowId, e.state])).toEqual([['race-1', 'completed']]);
  });

  it('the id submitted again after its flow completed: created false, nothing runs again', async () => {
    const runs: NodeRun[] = [];
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-submit-again') }, [nodeWorker(runs, 'sr', { concurrency: 8 })]);
    const flows = flowsOf(app);
    expect((await flows.submitFlow(DIAMOND, { id: 'again' })).created).toBe(true);
    const ended = await flowEnded(flows, 'again');
    expect(ended.state).toBe('completed');
    const again = await flows.submitFlow(DIAMOND, { id: 'again' });
    expect(again.created).toBe(false);
    await sleep(500);
    expect(runs).toHaveLength(42);
    expect(await flows.getFlow('again')).toEqual(ended);
  });
});
