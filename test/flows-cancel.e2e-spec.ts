/**
 * Flows (issue 30): cancelFlow, against real Redis (single server and cluster).
 *
 * Failure matrix (each cell a test below):
 * | capability                  | cell                                                                         |
 * |-----------------------------|------------------------------------------------------------------------------|
 * | cancel a running flow       | parked nodes, a delayed root and a ready one never run; the running node's   |
 * |                             | handler gets its abort signal and is not retried; the result counts them;    |
 * |                             | the flow ends 'cancelled' (onFlowEnded once); getTask of a cancelled parked  |
 * |                             | node is 'unknown'                                                            |
 * | cancel a completed flow     | nothing to cancel, the state stays 'completed' (a defect, fixed)           |
 * | cancel an unknown flow      | zeros, nothing written                                                       |
 * | a node cancelled alone      | TaskSubmitService.cancel of a flow's node (parked or waiting): a typed error |
 * |                             | naming cancelFlow, nothing changed; the flow completes                       |
 * | cancel racing completions   | 20 chains cancelled while their nodes complete: a node that starts after its |
 * |                             | flow's cancelFlow returned gets its abort signal (3 s bound), every flow     |
 * |                             | ends 'cancelled' (or 'completed' when all its nodes completed first) and no  |
 * |                             | node is left 'pending' or 'running'                                          |
 */
import 'reflect-metadata';
import { InvalidSubmitOptionsError, type FlowEndedEvent, type Task } from 'nestjs-distributed-queue';
import { flowEnded, flowsOf, keysUnder, nodeOf, nodeWorker, runsOf, type NodeRun } from './support/flow-nodes';
import { untilAborted, useQueueApps } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('cancelFlow on %s', (_name, target: RedisTarget) => {
  const { start, redis } = useQueueApps(target);

  it('parked, delayed and ready nodes never run, the running one is aborted, the flow ends cancelled', async () => {
    const runs: NodeRun[] = [];
    const aborted: unknown[] = [];
    const Hold = nodeWorker(runs, 'hold', { concurrency: 2, maxAttempts: 3 }, async (t: Task, signal: AbortSignal) => {
      if (t.flow!.ref !== 'run') return 'quick';
      try {
        return await untilAborted(signal);
      } catch (reason) {
        aborted.push(reason);
        throw reason;
      }
    });
    const Idle = nodeWorker(runs, 'idle', {});
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-cancel') }, [Hold, Idle]);
    const flows = flowsOf(app);
    const events: FlowEndedEvent[] = [];
    flows.onFlowEnded((e) => void events.push(e));
    await app.control.pause('idle');
    const { id, nodes } = await flows.submitFlow([
      { ref: 'run', type: 'hold', payload: {} },
      { ref: 'later', type: 'hold', payload: {}, delay: 1500 },
      { ref: 'ready', type: 'idle', payload: {} },
      { ref: 'parked', type: 'hold', payload: {}, dependsOn: ['run'] },
      { ref: 'parked2', type: 'idle', payload: {}, dependsOn: ['parked', 'later'] },
    ]);
    await waitFor(() => runsOf(runs, 'run').length === 1, { timeoutMs: 10_000 });
    const running = (await flows.getFlow(id))!;
    expect(['run', 'later', 'ready', 'parked', 'parked2'].map((r) => nodeOf(running, r).state)).toEqual(['running', 'delayed', 'ready', 'pending', 'pending']);

    expect(await flows.cancelFlow(id)).toEqual({ cancelled: 4, cancelRequested: 1 });
    await waitFor(() => aborted.length === 1, { timeoutMs: 5_000, message: 'the running node aborted' });
    await app.control.resume('idle');
    const flow = await flowEnded(flows, id);
    expect(flow.state).toBe('cancelled');
    expect(flow.counts).toEqual({ total: 5, completed: 0, dead: 0, cancelled: 5, blocked: 0 });
    expect(flow.nodes.every((n) => n.state === 'cancelled')).toBe(true);
    expect((await app.inspect.getTask('hold', nodes.parked.id)).state).toBe('unknown');
    expect((await app.inspect.getTask('idle', nodes.parked2.id)).state).toBe('unknown');
    await sleep(2000); // past 'later's due time, with 'idle' resumed
    expect(runs.map((r) => r.ref)).toEqual(['run']);
    expect(events.filter((e) => e.flowId === id).map((e) => e.state)).toEqual(['cancelled']);
    expect(await app.inspect.getCounts('hold')).toMatchObject({ delayed: 0, ready: 0, running: 0 });
  });

  // A defect fixed: cancel-7.lua set 'cancel' before looking at the state, and flowEnd turned a completed
  // flow into 'cancelled' (ended moved, retention restarted).
  it('a completed flow: cancelFlow cancels nothing and its state stays completed', async () => {
    const W = nodeWorker([], 'quick', {});
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-cancel-end') }, [W]);
    const flows = flowsOf(app);
    const { id } = await flows.submitFlow([{ ref: 'a', type: 'quick', payload: {} }, { ref: 'b', type: 'quick', payload: {}, dependsOn: ['a'] }]);
    const ended = await flowEnded(flows, id);
    expect(ended.state).toBe('completed');
    expect(await flows.cancelFlow(id)).toEqual({ cancelled: 0, cancelRequested: 0 });
    expect(await flows.getFlow(id)).toMatchObject({ state: 'completed', endedAt: ended.endedAt, counts: { total: 2, completed: 2, dead: 0, cancelled: 0, blocked: 0 } });
  });

  it("a flow's node cancelled alone: refused with a typed error, nothing changed, the flow completes", async () => {
    const prefix = uniquePrefix('flow-cancel-node');
    const producer = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { quick: {} } });
    const flows = flowsOf(producer);
    const { id, nodes } = await flows.submitFlow([{ ref: 'a', type: 'quick', payload: {} }, { ref: 'b', type: 'quick', payload: {}, dependsOn: ['a'] }]);
    const before = await keysUnder(redis(), prefix);
    for (const node of [nodes.a, nodes.b]) {
      const error = await producer.submit.cancel('quick', node.id).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidSubmitOptionsError);
      expect((error as Error).message).toContain('cancelFlow');
    }
    expect(await keysUnder(redis(), prefix)).toEqual(before);
    await start({ connection: target.connection, keyPrefix: prefix }, [nodeWorker([], 'quick', {})]);
    expect((await flowEnded(flows, id)).state).toBe('completed');
  });

  it('an unknown flow: cancelFlow cancels nothing and writes nothing', async () => {
    const prefix = uniquePrefix('flow-cancel-unknown');
    const app = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { quick: {} } });
    const before = await keysUnder(redis(), prefix);
    expect(await flowsOf(app).cancelFlow('no-such-flow')).toEqual({ cancelled: 0, cancelRequested: 0 });
    expect(await flowsOf(app).getFlow('no-such-flow')).toBeNull();
    expect(await keysUnder(redis(), prefix)).toEqual(before);
  });

  it('cancel racing completions: a node that starts after its cancelFlow returned gets its abort signal', async () => {
    const starts: { flow: string; ref: string; at: number; aborted: boolean }[] = [];
    const cancelledAt = new Map<string, number>();
    const runs: NodeRun[] = [];
    const W = nodeWorker(runs, 'link', { concurrency: 20, pollIntervalMs: 20 }, async (t: Task<{ ms: number }>, signal: AbortSignal) => {
      const start = { flow: t.flow!.id, ref: t.flow!.ref, at: Date.now(), aborted: signal.aborted };
      starts.push(start);
      if (!cancelledAt.has(start.flow)) return sleep(t.payload.ms);
      // started after its flow's cancelFlow returned: its signal must abort (3 s bound)
      start.aborted = await abortedWithin(signal, 3000);
    });
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-cancel-race') }, [W]);
    const flows = flowsOf(app);
    const chain = (n: number) => Array.from({ length: n }, (_, i) => ({ ref: `n${i}`, type: 'link', payload: { ms: i % 3 }, dependsOn: i === 0 ? [] : [`n${i - 1}`] }));
    const ids = await Promise.all(Array.from({ length: 20 }, () => flows.submitFlow(chain(30)).then((r) => r.id)));
    for (const [i, id] of ids.entries()) {
      await sleep(10 + (i % 5) * 15);
      await flows.cancelFlow(id);
      cancelledAt.set(id, Date.now());
    }
    const ended = await Promise.all(ids.map((id) => flowEnded(flows, id)));
    await waitFor(() => runs.every((r) => r.end !== null), { timeoutMs: 10_000 });
    const after = starts.filter((s) => s.at > cancelledAt.get(s.flow)!);
    console.log(`${after.length} node(s) started after their flow's cancelFlow returned`);
    const late = after.filter((s) => !s.aborted);
    expect(late).toEqual([]);
    for (const flow of ended) {
      // a flow whose nodes all completed before its cancelFlow (nothing left to cancel) stays 'completed'
      const allDone = flow.counts.completed === 30;
      expect([flow.id, allDone || flow.state === 'cancelled']).toEqual([flow.id, true]);
      const settled = flow.counts.completed + flow.counts.cancelled + flow.counts.dead + flow.counts.blocked;
      expect([flow.id, settled]).toEqual([flow.id, 30]);
      const open = flow.nodes.filter((n) => !['completed', 'cancelled'].includes(n.state));
      expect(open).toEqual([]);
    }
    // each node started at most once
    const seen = new Set(starts.map((s) => `${s.flow}/${s.ref}`));
    expect(seen.size).toBe(starts.length);
  });
});

/** True when `signal` aborts within `ms` (its timer cleared either way). */
function abortedWithin(signal: AbortSignal, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(true);
    }, { once: true });
  });
}
