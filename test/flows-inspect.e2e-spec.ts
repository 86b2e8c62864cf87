/**
 * Flows (issue 30): reading flows (getFlow, getTask of a node, listFlows), their end events and their
 * retention, against real Redis (single server and cluster).
 *
 * Failure matrix (each cell a test below):
 * | capability           | cell                                                                                |
 * |----------------------|-------------------------------------------------------------------------------------|
 * | node states          | while running: running, delayed, ready, pending (getFlow; getTask of a parked node  |
 * |                      | 'pending'); at the end: completed with results, dead with its error; counts         |
 * | unknown / bad id     | getFlow of an unknown id: null; of a bad id: InvalidFlowError                       |
 * | listFlows            | newest first, offset and limit, without nodes                                       |
 * | onFlowEnded          | fires once per flow with its end state (completed, failed); the removal stops it    |
 * | onFlowEnded, 2 apps  | 20 flows over two applications sharing the prefix: each end heard exactly once      |
 * | retention            | flows.retentionMs 1000: the ended flow's record expires (getFlow null), listFlows   |
 * |                      | prunes it from the index; a running flow does not expire                            |
 */
import 'reflect-metadata';
import { InvalidFlowError, type FlowEndedEvent, type Task } from 'nestjs-distributed-queue';
import { flowIndexKey } from 'nestjs-distributed-queue/flow/flow-keys';
import { flowEnded, flowsOf, keysUnder, nodeOf, nodeWorker, type NodeRun } from './support/flow-nodes';
import { useQueueApps } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('reading flows on %s', (_name, target: RedisTarget) => {
  const { start, redis } = useQueueApps(target);

  it('node states while running (a parked node is pending, in getFlow and getTask), then results and errors', async () => {
    const runs: NodeRun[] = [];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const Gate = nodeWorker(runs, 'gate', { concurrency: 4, maxAttempts: 1 }, async (t: Task<{ die?: boolean }>) => {
      if (t.flow!.ref === 'run') await gate;
      if (t.payload.die) throw new TypeError('no good');
      return { ref: t.flow!.ref };
    });
    const Idle = nodeWorker(runs, 'idle', {}, () => 'idle-done');
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-states') }, [Gate, Idle]);
    const flows = flowsOf(app);
    await app.control.pause('idle');
    const { id, nodes } = await flows.submitFlow([
      { ref: 'run', type: 'gate', payload: {} },
      { ref: 'later', type: 'gate', payload: {}, delay: 1500 },
      { ref: 'ready', type: 'idle', payload: {} },
      { ref: 'parked', type: 'gate', payload: { die: true }, dependsOn: ['run'], onFailure: 'ignore' },
      { ref: 'top', type: 'idle', payload: {}, dependsOn: ['parked', 'later', 'ready'] },
    ]);
    await waitFor(() => runs.length === 1, { timeoutMs: 10_000 });
    const running = (await flows.getFlow(id))!;
    expect(running).toMatchObject({ id, state: 'running', counts: { total: 5, completed: 0, dead: 0, cancelled: 0, blocked: 0 } });
    expect(running.endedAt).toBeUndefined();
    const states = Object.fromEntries(running.nodes.map((n) => [n.ref, n.state]));
    expect(states).toEqual({ run: 'running', later: 'delayed', ready: 'ready', parked: 'pending', top: 'pending' });
    expect(nodeOf(running, 'top')).toEqual({ ref: 'top', type: 'idle', id: nodes.top.id, state: 'pending', dependsOn: ['parked', 'later', 'ready'], onFailure: 'fail' });
    expect((await app.inspect.getTask('gate', nodes.parked.id)).state).toBe('pending');
    expect((await app.inspect.getTask('idle', nodes.top.id)).state).toBe('pending');
    expect((await app.inspect.getTask('gate', nodes.run.id)).state).toBe('running');

    open();
    await app.control.resume('idle');
    const flow = await flowEnded(flows, id);
    expect(flow.state).toBe('completed');
    expect(flow.counts).toEqual({ total: 5, completed: 4, dead: 1, cancelled: 0, blocked: 0 });
    expect(nodeOf(flow, 'run')).toMatchObject({ state: 'completed', result: { ref: 'run' } });
    expect(nodeOf(flow, 'parked')).toMatchObject({ state: 'dead', error: { name: 'TypeError', message: 'no good', attempts: 1 } });
    expect('result' in nodeOf(flow, 'parked')).toBe(false);
    expect(nodeOf(flow, 'top')).toMatchObject({ state: 'completed', result: 'idle-done' });
  });

  it('getFlow of an unknown id is null, of a bad id an InvalidFlowError', async () => {
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-unknown'), workers: false, types: { t: {} } });
    const flows = flowsOf(app);
    expect(await flows.getFlow('never-submitted')).toBeNull();
    await expect(flows.getFlow('bad id!')).rejects.toThrow(InvalidFlowError);
    await expect(flows.getFlow('')).rejects.toThrow(InvalidFlowError);
  });

  it('listFlows: newest first, by offset and limit, without nodes', async () => {
    const W = nodeWorker([], 'lf', { concurrency: 4 });
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-list') }, [W]);
    const flows = flowsOf(app);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await flows.submitFlow([{ ref: 'a', type: 'lf', payload: {} }], { id: `flow-${i}` })).id);
      await sleep(5);
    }
    await Promise.all(ids.map((id) => flowEnded(flows, id)));
    const all = await flows.listFlows();
    expect(all.map((f) => f.id)).toEqual(['flow-4', 'flow-3', 'flow-2', 'flow-1', 'flow-0']);
    expect(all[0]).toEqual({ id: 'flow-4', state: 'completed', createdAt: expect.any(Number), endedAt: expect.any(Number), counts: { total: 1, completed: 1, dead: 0, cancelled: 0, blocked: 0 } });
    expect((await flows.listFlows(1, 2)).map((f) => f.id)).toEqual(['flow-3', 'flow-2']);
    expect(await flows.listFlows(5, 10)).toEqual([]);
  });

  it('onFlowEnded fires once per flow with its end state; the removal stops it', async () => {
    const W = nodeWorker([], 'ev', { concurrency: 4, maxAttempts: 1 }, (t: Task<{ die?: boolean }>) => {
      if (t.payload.die) throw new Error('down');
    });
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-events') }, [W]);
    const flows = flowsOf(app);
    const events: FlowEndedEvent[] = [];
    const remove = flows.onFlowEnded((e) => void events.push(e));
    const ok = await flows.submitFlow([{ ref: 'a', type: 'ev', payload: {} }, { ref: 'b', type: 'ev', payload: {}, dependsOn: ['a'] }]);
    const bad = await flows.submitFlow([{ ref: 'a', type: 'ev', payload: { die: true } }, { ref: 'b', type: 'ev', payload: {}, dependsOn: ['a'] }]);
    await flowEnded(flows, ok.id);
    await flowEnded(flows, bad.id);
    await sleep(500);
    expect(events.map((e) => [e.flowId, e.state]).sort()).toEqual([[ok.id, 'completed'], [bad.id, 'failed']].sort());
    expect(events.every((e) => typeof e.at === 'number')).toBe(true);
    remove();
    const after = await flows.submitFlow([{ ref: 'a', type: 'ev', payload: {} }]);
    await flowEnded(flows, after.id);
    await sleep(300);
    expect(events).toHaveLength(2);
  });

  it('onFlowEnded across two applications: each end heard once, in one of them', async () => {
    const prefix = uniquePrefix('flow-events-2');
    const W = () => nodeWorker([], 'ev2', { concurrency: 4, pollIntervalMs: 20 }, () => sleep(Math.random() * 5));
    const apps = [await start({ connection: target.connection, keyPrefix: prefix }, [W()]), await start({ connection: target.connection, keyPrefix: prefix }, [W()])];
    const events: FlowEndedEvent[] = [];
    for (const app of apps) flowsOf(app).onFlowEnded((e) => void events.push(e));
    const chain = Array.from({ length: 5 }, (_, i) => ({ ref: `n${i}`, type: 'ev2', payload: {}, dependsOn: i === 0 ? [] : [`n${i - 1}`] }));
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => flowsOf(apps[i % 2]).submitFlow(chain).then((r) => r.id)));
    await Promise.all(ids.map((id) => flowEnded(flowsOf(apps[0]), id)));
    await sleep(500);
    expect(events.map((e) => e.flowId).sort()).toEqual([...ids].sort());
    expect(events.every((e) => e.state === 'completed')).toBe(true);
  });

  it('retention: an ended flow expires after flows.retentionMs and listFlows prunes it; a running one stays', async () => {
    const prefix = uniquePrefix('flow-retain');
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const W = nodeWorker([], 'rt', { concurrency: 4 }, (t: Task<{ wait?: boolean }>) => (t.payload.wait ? gate : 'x'));
    const app = await start({ connection: target.connection, keyPrefix: prefix, flows: { retentionMs: 1000 } }, [W]);
    const flows = flowsOf(app);
    const quick = await flows.submitFlow([{ ref: 'a', type: 'rt', payload: {} }, { ref: 'b', type: 'rt', payload: {}, dependsOn: ['a'] }]);
    const slow = await flows.submitFlow([{ ref: 'a', type: 'rt', payload: { wait: true } }, { ref: 'b', type: 'rt', payload: {}, dependsOn: ['a'] }]);
    const ended = await flowEnded(flows, quick.id);
    expect(ended.state).toBe('completed');
    expect((await redis().zrange(flowIndexKey(prefix), 0, -1)).sort()).toEqual([quick.id, slow.id].sort());
    await waitFor(async () => (await flows.getFlow(quick.id)) === null, { timeoutMs: 5_000, intervalMs: 100, message: 'the ended flow expired' });
    expect(Date.now() - ended.endedAt!).toBeGreaterThanOrEqual(900);
    expect((await keysUnder(redis(), prefix)).filter((k) => k.includes(`:flow:${quick.id}}`))).toEqual([]);
    await sleep(500);
    expect(await flows.getFlow(slow.id)).toMatchObject({ state: 'running' });
    expect((await flows.listFlows()).map((f) => f.id)).toEqual([slow.id]);
    expect(await redis().zrange(flowIndexKey(prefix), 0, -1)).toEqual([slow.id]);
    open();
    await flowEnded(flows, slow.id);
  });
});
