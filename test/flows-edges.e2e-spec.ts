/**
 * Flows (issue 30): three edges of the failure matrix left untested (docs/failure-matrix.md, section 10,
 * "NOT TESTED"): a crash in the middle of a cascade with no repeat by the worker, Redis black-holed with
 * flows in flight, and cancelFlow on a flow that already ended.
 *
 * Failure matrix (each cell a test below):
 * | capability                   | cell                                                                            |
 * |------------------------------|---------------------------------------------------------------------------------|
 * | a crash inside a cascade,    | root (maxAttempts 1, throws) with 5,000 dependents and two levels below some    |
 * | no repeat by the worker      | (policy 'fail'); its worker process (test/fixtures/flows-edges-worker.ts)       |
 * | (single, cluster)            | SIGKILLs itself after its 3rd cascade call (FlowStore.block, 200 dependents):   |
 * |                              | the flow reads partly blocked; a worker of the type started afterwards repairs  |
 * |                              | it alone (dead-letter sweep): every dependent 'blocked', the flow 'failed' with |
 * |                              | the right counts within 20 s, no dependent ever started                         |
 * | Redis black-holed (proxy     | 30 flows (4 children and a parent each) through a proxy that drops every byte   |
 * | `stall` 4 s) with flows in   | for 4 s without closing: submitFlow, getFlow and cancelFlow called meanwhile    |
 * | flight (own redis-server)    | reject with RedisUnavailableError within redisTimeoutMs + 1.5 s; once it        |
 * |                              | forwards again (no connection cut by the test) every flow completes by itself   |
 * |                              | (the refused submit repeated with its id); a node starts again only when its    |
 * |                              | run before overlapped the outage; a parent starts after its children ended      |
 * | cancelFlow on a flow that    | failed, nothing left that could run: { 0, 0 }, state, endedAt, counts kept;     |
 * | ended (single, cluster)      | a re-drive of the dead node still resumes it (it ends 'completed')              |
 * |                              | failed with blocked dependents: they are cancelled (documented: what has not    |
 * |                              | started never will), the flow ends 'cancelled'; a re-drive runs the dead node   |
 * |                              | only, the dependents never start; cancelFlow again changes nothing              |
 * |                              | completed (a dead 'ignore' node among them): { 0, 0 }, nothing changes          |
 * |                              | completed under 'continue' with a blocked node: that node is cancelled, the     |
 * |                              | flow ends 'cancelled' (a second end; only a flow with nothing left to cancel    |
 * |                              | keeps 'completed', cancel-7.lua)                                                |
 */
import { randomBytes } from 'crypto';
import { RedisUnavailableError, TaskFlowService, type FlowInfo, type FlowNode, type Task } from 'nestjs-distributed-queue';
import { flowsEnded, violations, type EndRecord, type StartRecord } from './fixtures/flows-crash-support';
import { killAllChildren, spawnChild } from './support/child';
import { flowEnded, flowsOf, flowWhere, nodeOf, nodeWorker, type NodeRun } from './support/flow-nodes';
import { startQueueApp, useQueueApps, type QueueApp } from './support/queue-app';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';
import { sleep, waitFor } from './support/wait';

/** The flow's counts without reading its 5,000 nodes (listFlows reads the meta only). */
async function countsOf(flows: TaskFlowService, id: string): Promise<Omit<FlowInfo, 'nodes'>> {
  const found = (await flows.listFlows(0, 10)).find((f) => f.id === id);
  if (!found) throw new Error(`flow ${id} not listed`);
  return found;
}

describe.each(getTargets().map((t) => [t.name, t] as const))('flows at the edges on %s', (_name, target: RedisTarget) => {
  const { start, redis } = useQueueApps(target);
  afterEach(() => killAllChildren());

  it('a worker SIGKILLed in the middle of a 5,000-dependent cascade: another worker repairs it alone, every dependent blocked, none ran', async () => {
    const prefix = uniquePrefix('flow-edge-cascade');
    const type = 'fe.node';
    const child = spawnChild('test/fixtures/flows-edges-worker.ts', {
      DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: type, DQ_DIE_BLOCK: '3',
    });
    await child.waitForMessage((m) => m.type === 'ready', 60_000);
    const producer = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { [type]: {} } });
    const flows = flowsOf(producer);
    const nodes: FlowNode[] = [
      { ref: 'root', type, payload: { die: true } },
      { ref: 'solo', type, payload: {} },
      ...Array.from({ length: 5_000 }, (_, i): FlowNode => ({ ref: `d${i}`, type, payload: {}, dependsOn: ['root'] })),
      ...Array.from({ length: 20 }, (_, i): FlowNode => ({ ref: `g${i}`, type, payload: {}, dependsOn: [`d${i}`] })),
      ...Array.from({ length: 20 }, (_, i): FlowNode => ({ ref: `h${i}`, type, payload: {}, dependsOn: [`g${i}`, `d${i + 1}`] })),
    ];
    const total = nodes.length;
    const { id } = await flows.submitFlow(nodes);
    let exit: unknown;
    void child.exited.then((e) => (exit = e));
    await waitFor(() => exit, { timeoutMs: 30_000, message: 'the worker died at its 3rd cascade call' });
    expect(exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(child.output()).toContain('DIE block 3');
    const killedAt = Date.now();

    // Cut in the middle: the root is dead in its flow, part of its dependents blocked, the flow still running.
    const cut = await countsOf(flows, id);
    expect(cut.state).toBe('running');
    expect(cut.counts.dead).toBe(1);
    expect(cut.counts.blocked).toBeGreaterThan(0);
    expect(cut.counts.blocked).toBeLessThan(total - 2);
    console.log(`cut after 3 cascade calls: ${cut.counts.blocked} of ${total - 2} dependents blocked`);

    // A worker of the type, started now: nothing runs the root again (maxAttempts 1, dead); its sweep repairs.
    const runs: NodeRun[] = [];
    await start({ connection: target.connection, keyPrefix: prefix }, [nodeWorker(runs, type, { maxAttempts: 1 }, (t: Task) => t.flow!.ref)]);
    const ended = await waitFor(async () => {
      const flow = await countsOf(flows, id);
      return flow.state === 'running' ? null : flow;
    }, { timeoutMs: 20_000, intervalMs: 200, message: 'the flow ended' });
    expect(Date.now() - killedAt).toBeLessThan(20_000);
    expect(ended.state).toBe('failed');
    expect(ended.counts).toEqual({ total, completed: 1, dead: 1, cancelled: 0, blocked: total - 2 });
    const flow = (await flows.getFlow(id))!;
    expect(nodeOf(flow, 'root')).toMatchObject({ state: 'dead', error: { message: 'root broke', attempts: 1 } });
    expect(nodeOf(flow, 'solo').state).toBe('completed');
    const notBlocked = flow.nodes.filter((n) => !['root', 'solo'].includes(n.ref) && n.state !== 'blocked').map((n) => `${n.ref}: ${n.state}`);
    expect(notBlocked).toEqual([]);
    await sleep(1000); // a late start of a dependent would show here
    const starts = [...(await redis().lrange(`${prefix}:t:starts`, 0, -1)), ...runs.map((r) => r.ref)];
    expect(starts.filter((ref) => ref !== 'solo')).toEqual(['root']);
  }, 60_000);
});

describe.each(getTargets().map((t) => [t.name, t] as const))('cancelFlow on a flow that ended on %s', (_name, target: RedisTarget) => {
  const { start } = useQueueApps(target);

  /** An app with one type 'fe.step' (maxAttempts 1): its handler throws while `broken(ref)`, returns its ref otherwise. */
  async function stepApp(label: string, broken: (ref: string) => boolean) {
    const runs: NodeRun[] = [];
    const W = nodeWorker(runs, 'fe.step', { maxAttempts: 1 }, (t: Task) => {
      if (broken(t.flow!.ref)) throw new Error(`${t.flow!.ref} broke`);
      return t.flow!.ref;
    });
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix(label) }, [W]);
    const flows = flowsOf(app);
    const ends: string[] = [];
    flows.onFlowEnded((e) => void ends.push(e.state));
    return { app, flows, runs, ends };
  }

  /** Waits for the flow's end, then the flow's side of it (its end state as getFlow reads it, twice the same). */
  async function endedFlow(flows: TaskFlowService, id: string): Promise<FlowInfo> {
    const ended = await flowEnded(flows, id);
    await sleep(300); // a cascade or an end event still on its way would show here
    expect(await flows.getFlow(id)).toEqual(ended);
    return ended;
  }

  it('failed, nothing left that could run: cancelFlow changes nothing, and a re-drive of the dead node still resumes the flow', async () => {
    let mended = false;
    const { app, flows, runs, ends } = await stepApp('flow-edge-cancel-failed', (ref) => ref === 'dies' && !mended);
    const { id, nodes } = await flows.submitFlow([{ ref: 'dies', type: 'fe.step', payload: {} }, { ref: 'solo', type: 'fe.step', payload: {} }]);
    const failed = await endedFlow(flows, id);
    expect(failed).toMatchObject({ state: 'failed', counts: { total: 2, completed: 1, dead: 1, cancelled: 0, blocked: 0 } });

    expect(await flows.cancelFlow(id)).toEqual({ cancelled: 0, cancelRequested: 0 });
    expect(await flows.getFlow(id)).toEqual(failed);
    expect(ends).toEqual(['failed']);

    mended = true;
    expect(await app.inspect.redriveDead('fe.step', [nodes.dies.id])).toBe(1);
    const resumed = await flowWhere(flows, id, (f) => f.state === 'completed', 10_000);
    expect(resumed.counts).toEqual({ total: 2, completed: 2, dead: 0, cancelled: 0, blocked: 0 });
    expect(runs.map((r) => r.ref).sort()).toEqual(['dies', 'dies', 'solo']);
  });

  it('failed with blocked dependents: cancelFlow cancels them, the flow ends cancelled; a re-drive runs the dead node only', async () => {
    let mended = false;
    const { app, flows, runs, ends } = await stepApp('flow-edge-cancel-blocked', (ref) => ref === 'dies' && !mended);
    const { id, nodes } = await flows.submitFlow([
      { ref: 'dies', type: 'fe.step', payload: {} },
      { ref: 'child', type: 'fe.step', payload: {}, dependsOn: ['dies'] },
      { ref: 'grand', type: 'fe.step', payload: {}, dependsOn: ['child'] },
      { ref: 'solo', type: 'fe.step', payload: {} },
    ]);
    const failed = await endedFlow(flows, id);
    expect(failed).toMatchObject({ state: 'failed', counts: { total: 4, completed: 1, dead: 1, cancelled: 0, blocked: 2 } });

    // Documented (cancelFlow's JSDoc, the README): what has not started never will, and the flow ends cancelled.
    expect(await flows.cancelFlow(id)).toEqual({ cancelled: 2, cancelRequested: 0 });
    const cancelled = (await flows.getFlow(id))!;
    expect(cancelled).toMatchObject({ state: 'cancelled', counts: { total: 4, completed: 1, dead: 1, cancelled: 2, blocked: 0 } });
    expect(['dies', 'child', 'grand', 'solo'].map((r) => nodeOf(cancelled, r).state)).toEqual(['dead', 'cancelled', 'cancelled', 'completed']);
    expect(ends).toEqual(['failed', 'cancelled']);
    expect(await flows.cancelFlow(id)).toEqual({ cancelled: 0, cancelRequested: 0 });
    expect(await flows.getFlow(id)).toEqual(cancelled);

    // The dead node is a dead letter still: re-driven, it runs and completes; what was cancelled never starts.
    mended = true;
    expect(await app.inspect.redriveDead('fe.step', [nodes.dies.id])).toBe(1);
    const after = await waitFor(async () => {
      const flow = (await flows.getFlow(id))!;
      return nodeOf(flow, 'dies').state === 'completed' ? flow : null;
    }, { timeoutMs: 10_000, message: 'the re-driven node completed' });
    await sleep(1000);
    expect(await flows.getFlow(id)).toEqual(after);
    expect(after).toMatchObject({ state: 'cancelled', endedAt: cancelled.endedAt, counts: { total: 4, completed: 2, dead: 0, cancelled: 2, blocked: 0 } });
    expect(runs.map((r) => r.ref).sort()).toEqual(['dies', 'dies', 'solo']);
    expect(ends).toEqual(['failed', 'cancelled']);
  });

  it("completed with a dead 'ignore' node: cancelFlow cancels nothing and changes nothing", async () => {
    const { flows, runs, ends } = await stepApp('flow-edge-cancel-done', (ref) => ref === 'ign');
    const { id } = await flows.submitFlow([
      { ref: 'ign', type: 'fe.step', payload: {}, onFailure: 'ignore' },
      { ref: 'after', type: 'fe.step', payload: {}, dependsOn: ['ign'] },
    ]);
    const completed = await endedFlow(flows, id);
    expect(completed).toMatchObject({ state: 'completed', counts: { total: 2, completed: 1, dead: 1, cancelled: 0, blocked: 0 } });
    expect(await flows.cancelFlow(id)).toEqual({ cancelled: 0, cancelRequested: 0 });
    await sleep(300);
    expect(await flows.getFlow(id)).toEqual(completed);
    expect(ends).toEqual(['completed']);
    expect(runs.map((r) => r.ref)).toEqual(['ign', 'after']);
  });

  // NOTE: 'completed' here is not "nothing left": a blocked node could still run after a re-drive, so it is
  // cancelled and the flow's state moves (cancel-7.lua: only a flow with nothing left to cancel keeps its state).
  it("completed under 'continue' with a blocked node: cancelFlow cancels that node and the flow ends cancelled", async () => {
    const { flows, runs, ends } = await stepApp('flow-edge-cancel-cont', (ref) => ref === 'dies');
    const { id } = await flows.submitFlow([
      { ref: 'dies', type: 'fe.step', payload: {}, onFailure: 'continue' },
      { ref: 'child', type: 'fe.step', payload: {}, dependsOn: ['dies'] },
      { ref: 'solo', type: 'fe.step', payload: {} },
    ]);
    const completed = await endedFlow(flows, id);
    expect(completed).toMatchObject({ state: 'completed', counts: { total: 3, completed: 1, dead: 1, cancelled: 0, blocked: 1 } });
    expect(await flows.cancelFlow(id)).toEqual({ cancelled: 1, cancelRequested: 0 });
    const cancelled = (await flows.getFlow(id))!;
    expect(cancelled).toMatchObject({ state: 'cancelled', counts: { total: 3, completed: 1, dead: 1, cancelled: 1, blocked: 0 } });
    expect(cancelled.endedAt).toBeGreaterThanOrEqual(completed.endedAt!);
    expect(nodeOf(cancelled, 'child').state).toBe('cancelled');
    expect(ends).toEqual(['completed', 'cancelled']);
    expect(runs.map((r) => r.ref).sort()).toEqual(['dies', 'solo']);
  });
});

describe('flows through Redis black-holed by a proxy', () => {
  const BOUND_MS = 1000;
  const SETTLED_MS = BOUND_MS + 1500;
  let server: RedisServerHandle;
  let proxy: TcpProxy | undefined;
  let app: QueueApp | undefined;
  beforeAll(async () => {
    server = await startRedisServer({ extraArgs: ['--save', ''] });
  });
  afterEach(async () => {
    proxy?.stall(false);
    await app?.close();
    await proxy?.close();
    app = proxy = undefined;
  });
  afterAll(() => server.remove());

  it('black-holed 4 s with flows in flight: calls meanwhile fail typed and bounded; after it every flow completes, only nodes cut by it run again', async () => {
    proxy = await startTcpProxy({ port: server.port });
    const runs: NodeRun[] = [];
    const work = (t: Task<{ ms: number }>) => sleep(t.payload.ms).then(() => t.flow!.ref);
    const options = { concurrency: 6, maxAttempts: 20, visibilityTimeoutMs: 3000 };
    app = await startQueueApp(
      { connection: `redis://127.0.0.1:${proxy.port}`, keyPrefix: uniquePrefix('flow-edge-bh'), redisTimeoutMs: BOUND_MS, shutdownTimeoutMs: 1000 },
      [nodeWorker(runs, 'fb.leaf', options, work), nodeWorker(runs, 'fb.top', options, work)],
    );
    const flows = flowsOf(app);
    const shape = (): FlowNode[] => {
      const ms = () => 200 + Math.floor(Math.random() * 600);
      const children = [0, 1, 2, 3].map((i): FlowNode => ({ ref: `c${i}`, type: 'fb.leaf', payload: { ms: ms() } }));
      return [...children, { ref: 'p', type: 'fb.top', payload: { ms: ms() }, dependsOn: children.map((c) => c.ref) }];
    };
    const submitted: { id: string; nodes: FlowNode[] }[] = [];
    for (let i = 0; i < 30; i++) {
      const nodes = shape();
      submitted.push({ id: (await flows.submitFlow(nodes)).id, nodes });
    }
    await waitFor(() => runs.filter((r) => r.end !== null).length >= 30, { timeoutMs: 20_000, message: 'nodes ran before the outage' });

    const stalledAt = Date.now();
    proxy.stall(true);
    const runningAtStall = runs.filter((r) => r.end === null).length;
    const refused = { id: randomBytes(8).toString('hex'), nodes: shape() };
    const calls: [string, () => Promise<unknown>][] = [
      ['submitFlow', () => flows.submitFlow(refused.nodes, { id: refused.id })],
      ['getFlow', () => flows.getFlow(submitted[submitted.length - 1].id)],
      ['cancelFlow', () => flows.cancelFlow('no-such-flow')],
    ];
    const during = await Promise.all(calls.map(async ([call, fn]) => {
      const at = Date.now();
      const error = await fn().then(() => null, (e: unknown) => e);
      return { call, error: (error as Error | null)?.constructor.name, ms: Date.now() - at };
    }));
    await sleep(stalledAt + 4000 - Date.now());
    proxy.stall(false); // no connection cut: the app finds its way back by itself
    const healedAt = Date.now();

    for (const { call, error, ms } of during) expect({ call, error, settled: ms < SETTLED_MS }).toEqual({ call, error: 'RedisUnavailableError', settled: true });
    expect(runningAtStall).toBeGreaterThan(0);
    // Its outcome was unknown: repeated with its id once Redis answers again.
    await waitFor(() => flows.submitFlow(refused.nodes, { id: refused.id }).then(() => true, (e: unknown) => {
      if (!(e instanceof RedisUnavailableError)) throw e;
      return false;
    }), { timeoutMs: 20_000, intervalMs: 200, message: 'the refused submit taken after the outage' });
    submitted.push(refused);

    const ended = await flowsEnded(flows, submitted.map((s) => s.id), 40_000);
    expect(ended.filter((f) => f.state !== 'completed').map((f) => `${f.id}: ${f.state}`)).toEqual([]);
    await sleep(3500); // a lease (3 s) of a node whose ack was lost, and a poll: a late repeat would show here
    const byStart = new Map<StartRecord, NodeRun>();
    const starts = runs.map((r) => {
      const start: StartRecord = { f: r.flow!.id, r: r.ref, pid: process.pid, a: 0, at: r.start, res: r.flow!.results };
      byStart.set(start, r);
      return start;
    });
    const ends: EndRecord[] = runs.filter((r) => r.end !== null).map((r) => ({ f: r.flow!.id, r: r.ref, pid: process.pid, a: 0, at: r.end! }));
    // A node may start again only when its run before overlapped the outage (its settle or ack may have been
    // sent into the silence up to a second after its handler returned).
    const cutByOutage = (prev: StartRecord): string | null => {
      const end = byStart.get(prev)!.end;
      return prev.at < healedAt && (end === null || end > stalledAt - 1000) ? null : `its run before (${prev.at}-${end}) did not overlap the outage (${stalledAt}-${healedAt})`;
    };
    expect(violations(submitted, starts, ends, cutByOutage)).toEqual([]);
    console.log(`black hole: ${runningAtStall} node(s) running when it began; ${runs.length - submitted.length * 5} repeat(s) in all; calls meanwhile: ${during.map((d) => `${d.call} ${d.ms} ms`).join(", ")}`);
  }, 60_000);
});
