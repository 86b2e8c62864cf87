/**
 * Flows (issue 30) across the masters of a real cluster (cluster only): a flow's nodes are parked, released
 * and settled on their own types' slots, its record on its own, with no cross-slot atomicity.
 *
 * Failure matrix (each cell a test below):
 * | capability              | cell                                                                            |
 * |-------------------------|---------------------------------------------------------------------------------|
 * | three masters, 4th slot | one flow whose nodes' types live on three different masters (CLUSTER KEYSLOT of |
 * |                         | `{<prefix>:<type>}`, owners from CLUSTER SLOTS) and whose record is on a fourth |
 * |                         | slot: every edge crosses masters; it completes, each node once, after its       |
 * |                         | dependencies, with their results                                                |
 */
import 'reflect-metadata';
import type { Cluster } from 'ioredis';
import type { FlowNode, Task } from 'nestjs-distributed-queue';
import { flowKeys } from 'nestjs-distributed-queue/flow/flow-keys';
import { rolesOn } from './fixtures/flows-crash-support';
import { flowEnded, flowsOf, nodeWorker, runsOf, type NodeRun } from './support/flow-nodes';
import { keysOf, useQueueApps } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep } from './support/wait';

const cluster = getTargets().find((t) => t.name === 'cluster');

(cluster ? describe : describe.skip)('flows across masters on cluster', () => {
  const target = cluster as RedisTarget;
  const { start, redis } = useQueueApps(target);

  it('a flow whose types live on three masters and whose record is on a fourth slot completes', async () => {
    const prefix = uniquePrefix('flow-masters');
    const cluster = redis() as Cluster;
    const { leaf, mid, top } = await rolesOn(cluster, prefix, 'fm');
    const slotOf = async (key: string) => Number(await cluster.call('CLUSTER', 'KEYSLOT', key));
    const ranges = (await cluster.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    const masterOf = (slot: number) => ranges.find(([from, to]) => slot >= from && slot <= to)![2][1];
    const typeSlots = await Promise.all([leaf, mid, top].map((t) => slotOf(keysOf(prefix, t).jobs)));
    expect(new Set(typeSlots.map(masterOf)).size).toBe(3);
    let flowId = '';
    for (let i = 0; !flowId; i++) {
      const slot = await slotOf(flowKeys(prefix, `fm-${i}`)[0]);
      if (!typeSlots.includes(slot)) flowId = `fm-${i}`;
    }

    const runs: NodeRun[] = [];
    const fn = async (t: Task<{ ms: number }>) => {
      await sleep(t.payload.ms);
      return { ref: t.flow!.ref, saw: Object.keys(t.flow!.results).sort() };
    };
    const workers = [leaf, mid, top].map((type) => nodeWorker(runs, type, { concurrency: 8 }, fn));
    const app = await start({ connection: target.connection, keyPrefix: prefix }, workers);
    const flows = flowsOf(app);
    // every edge goes from one master to another: leaf -> mid -> top -> leaf
    const nodes: FlowNode[] = [
      { ref: 'a', type: leaf, payload: { ms: 0 } },
      { ref: 'b', type: mid, payload: { ms: 50 }, dependsOn: ['a'] },
      { ref: 'c', type: top, payload: { ms: 10 }, dependsOn: ['a'] },
      { ref: 'd', type: top, payload: { ms: 0 }, dependsOn: ['b'] },
      { ref: 'e', type: leaf, payload: { ms: 0 }, dependsOn: ['c', 'd'] },
      ...Array.from({ length: 20 }, (_, i) => ({ ref: `f${i}`, type: [mid, top][i % 2], payload: { ms: i % 5 }, dependsOn: ['e'] })),
      { ref: 'z', type: mid, payload: { ms: 0 }, dependsOn: Array.from({ length: 20 }, (_, i) => `f${i}`) },
    ];
    const { id } = await flows.submitFlow(nodes, { id: flowId });
    const flow = await flowEnded(flows, id, 30_000);
    await sleep(300);
    expect(flow.state).toBe('completed');
    expect(flow.counts).toEqual({ total: 26, completed: 26, dead: 0, cancelled: 0, blocked: 0 });
    expect(runs).toHaveLength(26);
    for (const node of nodes) {
      const [run] = runsOf(runs, node.ref);
      expect([node.ref, run.type]).toEqual([node.ref, node.type]);
      const deps = node.dependsOn ?? [];
      for (const dep of deps) expect([node.ref, dep, run.start >= runsOf(runs, dep)[0].end!]).toEqual([node.ref, dep, true]);
      expect(Object.keys(run.flow!.results).sort()).toEqual([...deps].sort());
    }
    expect(runsOf(runs, 'e')[0].flow!.results).toEqual({ c: { ref: 'c', saw: ['a'] }, d: { ref: 'd', saw: ['b'] } });
    // the record lives on its own slot, on the master that serves it
    expect(await cluster.exists(flowKeys(prefix, id)[0])).toBe(1);
  });
});
