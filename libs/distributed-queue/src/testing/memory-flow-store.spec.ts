import 'reflect-metadata';
import type { DistributedQueueExplorer, DiscoveredWorker } from '../distributed-queue.explorer';
import { FlowEvents, type FlowEndedEvent } from '../flow/flow-events';
import { flowNodeId } from '../flow/flow-keys';
import { FlowProgress } from '../flow/flow-progress';
import type { FlowDef } from '../flow/flow.store';
import type { FlowInfo, FlowNode, Task, TaskErrorInfo, TaskFlow } from '../interfaces';
import { mergeWorkerOptions, resolveModuleOptions } from '../options/resolve-options';
import type { RedisClient } from '../redis/script-loader';
import type { EventSubscriber } from '../runtime/event-subscriber';
import { TaskFlowService } from '../services/task-flow.service';
import { MemoryDelayStore } from './memory-delay-store';
import { MemoryEngine, parsed } from './memory-engine';
import { MemoryEventBus } from './memory-event-bus';
import { MemoryEventSubscriber } from './memory-event-subscriber';
import { MemoryFlowStore } from './memory-flow-store';
import { MemoryGroups } from './memory-groups';
import { MemoryLimits } from './memory-limits';
import { MemoryRunner } from './memory-runner';
import type { MemoryTask } from './memory-type';
import { TestClock } from './test-clock';

const START = 1_000_000;
const RETENTION = 60_000;

/** FlowProgress as the testing module runs it: a flush in a microtask, no timer. */
class MicrotaskProgress extends FlowProgress {
  protected override schedule(flush: () => void): void {
    queueMicrotask(flush);
  }
}

type Handler = (task: { ref: string; payload: any; flow: TaskFlow }) => unknown;

interface Run {
  ref: string;
  flow: TaskFlow;
  at: number;
}

/** The real FlowProgress, TaskFlowService and readFlow over the in-memory engine and MemoryFlowStore. */
function harness(handlers: Record<string, Handler> = {}) {
  const clock = new TestClock('manual', START);
  const bus = new MemoryEventBus();
  const engine = new MemoryEngine(clock, 'dq', 1000, bus, new MemoryEventSubscriber(), () => ({}));
  const limits = new MemoryLimits(engine, () => undefined);
  const groups = new MemoryGroups(engine);
  const delay = new MemoryDelayStore(engine, limits, groups);
  const store = new MemoryFlowStore(engine, RETENTION);
  const options = resolveModuleOptions({ waitForRedis: false, flows: { retentionMs: RETENTION, maxResultBytes: 256 } });
  const events = new FlowEvents({ publish: async () => 1 } as unknown as RedisClient, options, {} as EventSubscriber);
  const progress = new MicrotaskProgress(store, options.flows.maxResultBytes, events);
  const explorer = { isKnown: () => true, isOrdered: () => false } as unknown as DistributedQueueExplorer;
  const flows = new TaskFlowService(explorer, delay, options, progress, events);
  const ended: FlowEndedEvent[] = [];
  flows.onFlowEnded((e) => void ended.push(e));
  const runs: Run[] = [];

  /** Runs one attempt of a due node as a consumer does: context, handler, completion (before the ack) or burial (then its death). */
  async function runOne(task: MemoryTask): Promise<void> {
    const queue = engine.type(task.type);
    const now = clock.now();
    task.state = 'running';
    const flow = await progress.context(task.id);
    runs.push({ ref: flow.ref, flow, at: now });
    try {
      const result = await handlers[task.type]({ ref: flow.ref, payload: parsed(task.payload), flow });
      await progress.completed(task.id, progress.encodeResult(result));
      task.attempts++;
      queue.finish(task, engine.keepDone);
    } catch (error) {
      task.attempts++;
      const info: TaskErrorInfo = { name: (error as Error).name, message: (error as Error).message, attempts: task.attempts, failedAt: now };
      Object.assign(task, { state: 'dead', error: info, diedAt: now });
      queue.dead.add(task.id);
      store.nodeBuried(task.type, task.id, now, JSON.stringify(info));
      await progress.dead(task.id, info);
    }
  }

  /** Runs every due node (every attempt of a round at once, as concurrent workers) until none is due. */
  async function runDue(): Promise<number> {
    let ran = 0;
    for (;;) {
      const due = Object.keys(handlers).flatMap((type) => engine.type(type).due(clock.now()));
      if (due.length === 0) return ran;
      ran += due.length;
      await Promise.all(due.map(runOne));
    }
  }

  const getFlow = async (id: string): Promise<FlowInfo> => (await flows.getFlow(id))!;
  return { clock, engine, delay, store, progress, flows, events, ended, runs, runDue, getFlow };
}

const refsOf = (runs: Run[]): string[] => runs.map((r) => r.ref);
const nodeOf = (flow: FlowInfo, ref: string) => flow.nodes.find((n) => n.ref === ref)!;
const statesOf = (flow: FlowInfo): Record<string, string> => Object.fromEntries(flow.nodes.map((n) => [n.ref, n.state]));
const step: Handler = ({ ref, payload }) => {
  if (payload.die) throw new Error(`${ref} broke`);
  return `${ref}-done`;
};

describe('MemoryFlowStore', () => {
  describe('progression', () => {
    it('a chain of 3: each node is parked (pending) until the one before completed, and reads its result', async () => {
      const h = harness({ link: ({ payload, flow }) => ((Object.values(flow.results)[0] as number) ?? 0) + payload.n });
      const { id, created, nodes } = await h.flows.submitFlow([
        { ref: 'one', type: 'link', payload: { n: 1 } },
        { ref: 'two', type: 'link', payload: { n: 10 }, dependsOn: ['one'] },
        { ref: 'three', type: 'link', payload: { n: 100 }, dependsOn: ['two'] },
      ]);
      expect(created).toBe(true);
      const before = await h.getFlow(id);
      expect(before).toMatchObject({ id, state: 'running', createdAt: START, counts: { total: 3, completed: 0, dead: 0, cancelled: 0, blocked: 0 } });
      expect(before.endedAt).toBeUndefined();
      expect(statesOf(before)).toEqual({ one: 'ready', two: 'pending', three: 'pending' });
      expect((await h.delay.get('link', nodes.two.id)).state).toBe('pending');
      expect(h.engine.type('link').tasks.get(nodes.three.id)!.state).toBe('parked');

      h.clock.forward(5);
      await h.runDue();
      expect(refsOf(h.runs)).toEqual(['one', 'two', 'three']);
      expect(h.runs[2].flow).toEqual({ id, ref: 'three', results: { two: 11 }, failed: {} });
      const flow = await h.getFlow(id);
      expect(flow).toMatchObject({ state: 'completed', endedAt: START + 5, counts: { total: 3, completed: 3, dead: 0, cancelled: 0, blocked: 0 } });
      expect(flow.nodes.map((n) => [n.ref, n.state, n.result])).toEqual([['one', 'completed', 1], ['two', 'completed', 11], ['three', 'completed', 111]]);
      expect(nodeOf(flow, 'three')).toEqual({ ref: 'three', type: 'link', id: flowNodeId(id, 'three'), state: 'completed', dependsOn: ['two'], onFailure: 'fail', result: 111 });
      expect(h.ended.map((e) => [e.flowId, e.state])).toEqual([[id, 'completed']]);
    });

    it('a diamond: d is released once, after b and c completed, and reads both results', async () => {
      const h = harness({ dia: ({ ref, flow }) => `${ref}:${Object.keys(flow.results).sort().join('+')}` });
      const { id } = await h.flows.submitFlow([
        { ref: 'd', type: 'dia', payload: {}, dependsOn: ['b', 'c'] },
        { ref: 'b', type: 'dia', payload: {}, dependsOn: ['a'] },
        { ref: 'c', type: 'dia', payload: {}, dependsOn: ['a'] },
        { ref: 'a', type: 'dia', payload: {} },
      ]);
      await h.runDue();
      expect(refsOf(h.runs).sort()).toEqual(['a', 'b', 'c', 'd']);
      expect(refsOf(h.runs)[3]).toBe('d');
      const flow = await h.getFlow(id);
      expect(flow.state).toBe('completed');
      expect(nodeOf(flow, 'd').result).toBe('d:b+c');
      // getFlow lists the nodes in the order submitFlow was given them
      expect(flow.nodes.map((n) => n.ref)).toEqual(['d', 'b', 'c', 'a']);
      // a late or repeated completion of b tells d again: nothing is released twice
      expect(await h.store.release('dia', [[flowNodeId(id, 'd'), 'b', '1']])).toEqual([]);
    });

    it('releases a node only when its last dependency is told, due its delay from then, with its priority', async () => {
      const h = harness();
      const { id, nodes } = await h.flows.submitFlow([
        { ref: 'a', type: 't', payload: {} },
        { ref: 'b', type: 't', payload: {} },
        { ref: 'top', type: 't', payload: { x: 1 }, dependsOn: ['a', 'b'], delay: 800, priority: 3 },
      ]);
      expect(await h.store.release('t', [[nodes.top.id, 'a', '0']])).toEqual([]);
      expect(await h.store.release('t', [[nodes.top.id, 'a', '0']])).toEqual([]); // a repeat
      h.clock.forward(100);
      expect(await h.store.release('t', [[nodes.top.id, 'b', '1'], [nodes.top.id, 'b', '1']])).toEqual([nodes.top.id]);
      const task = h.engine.type('t').tasks.get(nodes.top.id)!;
      expect(task).toMatchObject({ state: 'waiting', dueAt: START + 100 + 800, priority: 3 });
      expect(h.engine.submitted.find((s) => s.id === nodes.top.id)).toMatchObject({ payload: { x: 1 }, dueAt: START + 900 });
      expect((await h.delay.get('t', nodes.top.id)).state).toBe('delayed');
      // getFlow reads a node's task once its dependencies are settled in the flow (here they were only told)
      expect(nodeOf(await h.getFlow(id), 'top').state).toBe('pending');
    });

    it('a node returning undefined leaves no result, in its dependents\' results nor in getFlow', async () => {
      const h = harness({ maybe: ({ payload }) => payload.v });
      const { id } = await h.flows.submitFlow([
        { ref: 'none', type: 'maybe', payload: {} },
        { ref: 'zero', type: 'maybe', payload: { v: 0 } },
        { ref: 'top', type: 'maybe', payload: {}, dependsOn: ['none', 'zero'] },
      ]);
      await h.runDue();
      expect(h.runs.find((r) => r.ref === 'top')!.flow).toEqual({ id, ref: 'top', results: { zero: 0 }, failed: {} });
      const flow = await h.getFlow(id);
      expect('result' in nodeOf(flow, 'none')).toBe(false);
      expect(nodeOf(flow, 'zero').result).toBe(0);
      expect(await h.store.context(id, 'top')).toEqual([['none', 'c', ''], ['zero', 'c', '0']]);
    });

    it('a result larger than maxResultBytes: the node dies with FlowResultError, its dependents blocked', async () => {
      const h = harness({ big: () => ({ text: 'x'.repeat(300) }), next: () => 'ran' });
      const { id } = await h.flows.submitFlow([
        { ref: 'big', type: 'big', payload: {} },
        { ref: 'next', type: 'next', payload: {}, dependsOn: ['big'] },
        { ref: 'after', type: 'next', payload: {}, dependsOn: ['next'] },
      ]);
      await h.runDue();
      const flow = await h.getFlow(id);
      expect(flow).toMatchObject({ state: 'failed', counts: { total: 3, completed: 0, dead: 1, cancelled: 0, blocked: 2 } });
      expect(nodeOf(flow, 'big')).toMatchObject({ state: 'dead', error: { name: 'FlowResultError', attempts: 1 } });
      expect(statesOf(flow)).toEqual({ big: 'dead', next: 'blocked', after: 'blocked' });
      expect(refsOf(h.runs)).toEqual(['big']);
    });
  });

  describe('failure policies', () => {
    it("'fail': the dependents (transitively) never run, an independent branch runs, the flow ends failed", async () => {
      const h = harness({ step });
      const { id } = await h.flows.submitFlow([
        { ref: 'root', type: 'step', payload: {} },
        { ref: 'dies', type: 'step', payload: { die: true }, dependsOn: ['root'] },
        { ref: 'c1', type: 'step', payload: {}, dependsOn: ['dies'] },
        { ref: 'c2', type: 'step', payload: {}, dependsOn: ['dies'] },
        { ref: 'g1', type: 'step', payload: {}, dependsOn: ['c1', 'c2'] },
        { ref: 'gg', type: 'step', payload: {}, dependsOn: ['g1'] },
        { ref: 'side', type: 'step', payload: {}, dependsOn: ['root'] },
        { ref: 'mixed', type: 'step', payload: {}, dependsOn: ['side', 'c2'] },
      ]);
      await h.runDue();
      const flow = await h.getFlow(id);
      expect(flow.state).toBe('failed');
      expect(flow.endedAt).toBeGreaterThanOrEqual(flow.createdAt);
      expect(flow.counts).toEqual({ total: 8, completed: 2, dead: 1, cancelled: 0, blocked: 5 });
      for (const ref of ['c1', 'c2', 'g1', 'gg', 'mixed']) expect([ref, nodeOf(flow, ref).state]).toEqual([ref, 'blocked']);
      expect(nodeOf(flow, 'dies')).toMatchObject({ state: 'dead', onFailure: 'fail', error: { name: 'Error', message: 'dies broke', attempts: 1 } });
      expect(refsOf(h.runs).sort()).toEqual(['dies', 'root', 'side']);
      const page = (await h.store.page(id, '0', 100))!;
      expect(Object.fromEntries(page.nodes.map((n) => [n.ref, n.blocking]))).toEqual({ root: 0, dies: 0, c1: 1, c2: 1, g1: 2, gg: 1, side: 0, mixed: 1 });
      expect(h.ended.map((e) => e.state)).toEqual(['failed']);
    });

    it("'fail' with an independent branch still to run: the flow stays running until it ran", async () => {
      const h = harness({ step });
      const { id } = await h.flows.submitFlow([
        { ref: 'dies', type: 'step', payload: { die: true } },
        { ref: 'child', type: 'step', payload: {}, dependsOn: ['dies'] },
        { ref: 'solo', type: 'step', payload: {}, delay: 1000 },
      ]);
      await h.runDue();
      const mid = await h.getFlow(id);
      expect(mid.state).toBe('running');
      expect(statesOf(mid)).toEqual({ dies: 'dead', child: 'blocked', solo: 'delayed' });
      h.clock.forward(1000);
      await h.runDue();
      const flow = await h.getFlow(id);
      expect(flow).toMatchObject({ state: 'failed', endedAt: START + 1000, counts: { total: 3, completed: 1, dead: 1, cancelled: 0, blocked: 1 } });
    });

    it("'ignore': the dependent runs with the error in task.flow.failed; the flow completes", async () => {
      const h = harness({ step });
      const { id } = await h.flows.submitFlow([
        { ref: 'dies', type: 'step', payload: { die: true }, onFailure: 'ignore' },
        { ref: 'ok', type: 'step', payload: {} },
        { ref: 'child', type: 'step', payload: {}, dependsOn: ['dies', 'ok'] },
        { ref: 'grand', type: 'step', payload: {}, dependsOn: ['child'] },
      ]);
      await h.runDue();
      const flow = await h.getFlow(id);
      expect(flow).toMatchObject({ state: 'completed', counts: { total: 4, completed: 3, dead: 1, cancelled: 0, blocked: 0 } });
      const child = h.runs.find((r) => r.ref === 'child')!;
      expect(child.flow.results).toEqual({ ok: 'ok-done' });
      expect(child.flow.failed).toEqual({ dies: { name: 'Error', message: 'dies broke', attempts: 1, failedAt: START } });
      expect(h.runs.find((r) => r.ref === 'grand')!.flow).toEqual({ id, ref: 'grand', results: { child: 'child-done' }, failed: {} });
      expect(nodeOf(flow, 'dies')).toMatchObject({ state: 'dead', onFailure: 'ignore' });
    });

    it("'continue': the dependents are blocked, an independent branch completes, the flow ends completed", async () => {
      const h = harness({ step });
      const { id } = await h.flows.submitFlow([
        { ref: 'dies', type: 'step', payload: { die: true }, onFailure: 'continue' },
        { ref: 'child', type: 'step', payload: {}, dependsOn: ['dies'] },
        { ref: 'grand', type: 'step', payload: {}, dependsOn: ['child'] },
        { ref: 'x', type: 'step', payload: {} },
        { ref: 'y', type: 'step', payload: {}, dependsOn: ['x'] },
      ]);
      await h.runDue();
      const flow = await h.getFlow(id);
      expect(flow).toMatchObject({ state: 'completed', counts: { total: 5, completed: 2, dead: 1, cancelled: 0, blocked: 2 } });
      expect(statesOf(flow)).toMatchObject({ child: 'blocked', grand: 'blocked', y: 'completed' });
      expect(refsOf(h.runs).sort()).toEqual(['dies', 'x', 'y']);
    });

    it("re-drive after 'fail': the flow runs again (no end, no TTL), the dependents run once, it ends completed", async () => {
      let broken = true;
      const h = harness({ step: ({ ref }) => { if (ref === 'flaky' && broken) throw new Error('flaky broke'); return `${ref}-done`; } });
      const { id, nodes } = await h.flows.submitFlow([
        { ref: 'flaky', type: 'step', payload: {} },
        { ref: 'child', type: 'step', payload: {}, dependsOn: ['flaky'] },
        { ref: 'grand', type: 'step', payload: {}, dependsOn: ['child'] },
      ]);
      await h.runDue();
      expect(await h.getFlow(id)).toMatchObject({ state: 'failed', counts: { total: 3, completed: 0, dead: 1, cancelled: 0, blocked: 2 } });
      broken = false;
      h.clock.forward(RETENTION); // not expired yet: the last ms of its retention
      expect(await h.delay.redrive('step', [nodes.flaky.id], 1)).toBe(1);
      await h.runDue();
      const flow = await h.getFlow(id);
      expect(flow).toMatchObject({ state: 'completed', endedAt: START + RETENTION, counts: { total: 3, completed: 3, dead: 0, cancelled: 0, blocked: 0 } });
      expect(nodeOf(flow, 'flaky')).toMatchObject({ state: 'completed', result: 'flaky-done' });
      expect('error' in nodeOf(flow, 'flaky')).toBe(false);
      expect(refsOf(h.runs)).toEqual(['flaky', 'flaky', 'child', 'grand']);
      expect(h.ended.map((e) => e.state)).toEqual(['failed', 'completed']);
      // the new end restarted the retention
      h.clock.forward(RETENTION);
      expect(await h.flows.getFlow(id)).not.toBeNull();
      h.clock.forward(1);
      expect(await h.flows.getFlow(id)).toBeNull();
    });

    it("re-drive under 'continue' and 'ignore': counts end all completed, an ignored node's dependent does not run again", async () => {
      let broken = true;
      const h = harness({ step: ({ ref }) => { if (ref.startsWith('flaky') && broken) throw new Error('broke'); return ref; } });
      const cont = await h.flows.submitFlow([
        { ref: 'flaky', type: 'step', payload: {}, onFailure: 'continue' },
        { ref: 'child', type: 'step', payload: {}, dependsOn: ['flaky'] },
        { ref: 'other', type: 'step', payload: {} },
      ]);
      const ign = await h.flows.submitFlow([
        { ref: 'flaky2', type: 'step', payload: {}, onFailure: 'ignore' },
        { ref: 'child2', type: 'step', payload: {}, dependsOn: ['flaky2'] },
      ]);
      await h.runDue();
      expect((await h.getFlow(cont.id)).counts).toEqual({ total: 3, completed: 1, dead: 1, cancelled: 0, blocked: 1 });
      expect((await h.getFlow(ign.id)).counts).toEqual({ total: 2, completed: 1, dead: 1, cancelled: 0, blocked: 0 });
      broken = false;
      expect(await h.delay.redrive('step', [cont.nodes.flaky.id, ign.nodes.flaky2.id], 2)).toBe(2);
      await h.runDue();
      expect(await h.getFlow(cont.id)).toMatchObject({ state: 'completed', counts: { total: 3, completed: 3, dead: 0, cancelled: 0, blocked: 0 } });
      expect(await h.getFlow(ign.id)).toMatchObject({ state: 'completed', counts: { total: 2, completed: 2, dead: 0, cancelled: 0, blocked: 0 } });
      expect(refsOf(h.runs).filter((r) => r === 'child')).toHaveLength(1);
      expect(refsOf(h.runs).filter((r) => r === 'child2')).toHaveLength(1);
      expect(h.runs.find((r) => r.ref === 'child')!.flow.results).toEqual({ flaky: 'flaky' });
    });
  });

  describe('settle and block (the script replies)', () => {
    const def = (f: FlowDef['f'], d: string[], n: string[], i: number): FlowDef => ({ t: 't', pt: 't', d, n, f, i });

    it('settle: changed, delta, next, tell; a repeat changes nothing, a repeated death walks (delta 2)', async () => {
      const h = harness();
      const define = await h.store.define('f1', 3, true, [
        { ref: 'a', def: def('fail', [], ['b', 't', 'c', 't'], 0) },
        { ref: 'b', def: def('fail', ['a'], [], 1) },
        { ref: 'c', def: def('ignore', ['a'], [], 2) },
      ]);
      expect(define).toEqual({ created: true, ended: '', settled: [false, false, false] });
      const died = await h.store.settle('f1', [{ ref: 'a', outcome: 'x', json: '{"name":"Error"}' }]);
      expect(died).toEqual({ ended: 'failed', replies: [{ changed: true, delta: 1, next: [['b', 1], ['c', 1]], tell: [] }] });
      const again = await h.store.settle('f1', [{ ref: 'a', outcome: 'x', json: '{"name":"Error"}' }]);
      // a repeated death walks its blocked dependents again (the worker that recorded it may have died mid-cascade)
      expect(again).toEqual({ ended: '', replies: [{ changed: false, delta: 2, next: [['b', 1], ['c', 1]], tell: [] }] });
      // walking: each blocked dependent again (each edge counts once)
      expect(await h.store.block('f1', 2, [['a', 1]], 200)).toEqual({ ended: '', next: [['b', 1], ['c', 1]] });
      expect((await h.store.meta('f1'))).toMatchObject({ state: 'failed', dead: '1', deadFail: '1', blocked: '2' });
      const completed = await h.store.settle('f1', [{ ref: 'a', outcome: 'c', json: '"late"' }, { ref: 'nope', outcome: 'c', json: '' }]);
      expect(completed).toEqual({
        ended: '',
        replies: [
          { changed: true, delta: -1, next: [['b', 1], ['c', 1]], tell: ['b', 't', 'c', 't'] },
          { changed: null, delta: 0, next: [], tell: [] },
        ],
      });
      // the flow runs again (settled: 1 done, its dependents freed by the settle's own cascade): no end, no TTL
      expect(await h.store.block('f1', -1, [['b', 1], ['c', 1]], 200)).toEqual({ ended: '', next: [] });
      const meta = (await h.store.meta('f1'))!;
      expect(meta).toMatchObject({ state: 'running', done: '1', dead: '0', deadFail: '0', blocked: '0' });
      expect(meta.ended).toBeUndefined();
      // a death never changes a completed node
      expect((await h.store.settle('f1', [{ ref: 'a', outcome: 'x', json: '{}' }])).replies[0]).toEqual({ changed: false, delta: 0, next: [], tell: [] });
      expect(await h.store.settle('no-such', [{ ref: 'a', outcome: 'c', json: '' }])).toEqual({ ended: '', replies: [{ changed: null, delta: 0, next: [], tell: [] }] });
    });

    it('a cascade over 450 dependents: 200 a call, resumed where it stopped, every one blocked once', async () => {
      const h = harness();
      const n = 450;
      const deps = Array.from({ length: n }, (_, i) => `d${i}`);
      await h.store.define('wide', n + 1, true, [
        { ref: 'root', def: def('fail', [], deps.flatMap((d) => [d, 't']), 0) },
        ...deps.map((d, i) => ({ ref: d, def: def('fail', ['root'], [], i + 1) })),
      ]);
      const { replies } = await h.store.settle('wide', [{ ref: 'root', outcome: 'x', json: '' }]);
      expect(replies[0].next[0][0]).toBe('root');
      expect(replies[0].next[0][1]).toBeGreaterThan(1);
      expect(replies[0].next).toHaveLength(201);
      expect((await h.store.meta('wide'))!.blocked).toBe('200');
      const first = await h.store.block('wide', 1, replies[0].next.slice(0, 1), 200);
      expect(first.next[0][0]).toBe('root');
      expect(first.next).toHaveLength(201);
      expect(first.ended).toBe('');
      const last = await h.store.block('wide', 1, first.next.slice(0, 1), 200);
      expect(last).toEqual({ ended: 'failed', next: deps.slice(400).map((d) => [d, 1]) });
      expect((await h.store.meta('wide'))).toMatchObject({ state: 'failed', blocked: String(n), dead: '1' });
    });

    it('the same through FlowProgress: a dead root of 450 dependents blocks them all and fails the flow', async () => {
      const h = harness({ w: ({ ref }) => { if (ref === 'root') throw new Error('no'); return ref; } });
      const nodes: FlowNode[] = [{ ref: 'root', type: 'w', payload: {} }, ...Array.from({ length: 450 }, (_, i) => ({ ref: `d${i}`, type: 'w', payload: {}, dependsOn: ['root'] }))];
      const { id } = await h.flows.submitFlow(nodes);
      await h.runDue();
      const flow = await h.getFlow(id);
      expect(flow).toMatchObject({ state: 'failed', counts: { total: 451, completed: 0, dead: 1, cancelled: 0, blocked: 450 } });
      expect(flow.nodes.filter((n) => n.state === 'blocked')).toHaveLength(450);
    });
  });

  describe('define (submitFlow in batches, repeats)', () => {
    it("a flow stays 'creating' until its last batch; a repeat says which nodes to leave alone", async () => {
      const h = harness();
      const a = { ref: 'a', def: { t: 't', pt: 't', d: [], n: ['b', 't'], f: 'fail' as const, i: 0 } };
      const b = { ref: 'b', def: { t: 't', pt: 't', d: ['a'], n: [], f: 'fail' as const, i: 1 } };
      expect(await h.store.define('c1', 2, false, [a])).toEqual({ created: true, ended: '', settled: [false] });
      expect((await h.store.meta('c1'))!.state).toBe('creating');
      expect(await h.store.settle('c1', [{ ref: 'a', outcome: 'c', json: '1' }])).toMatchObject({ ended: '' });
      expect(await h.store.define('c1', 2, true, [a, b])).toEqual({ created: false, ended: '', settled: [true, false] });
      expect((await h.store.meta('c1'))!.state).toBe('running');
      // past 'creating': a node the flow does not have is left alone, nothing written
      expect(await h.store.define('c1', 2, true, [{ ...b, ref: 'zzz' }, b])).toEqual({ created: false, ended: '', settled: [true, false] });
      expect((await h.store.page('c1', '0', 100))!.nodes.map((n) => n.ref)).toEqual(['a', 'b']);
      expect(await h.store.settle('c1', [{ ref: 'b', outcome: 'c', json: '' }])).toMatchObject({ ended: 'completed' });
      // a repeat that finds every node settled: ended '' (already ended), all settled
      expect(await h.store.define('c1', 2, true, [a, b])).toEqual({ created: false, ended: '', settled: [true, true] });
    });

    it('the meta as flow-record.lua keeps it, and page / cancelPage decode the defs', async () => {
      const h = harness();
      const { id, nodes } = await h.flows.submitFlow([
        { ref: 'a', type: 't', payload: {}, priority: 2, group: 'g1', delay: 50 },
        { ref: 'b', type: 't', payload: {}, dependsOn: ['a'], onFailure: 'continue' },
      ], { id: 'meta-flow' });
      expect(await h.store.meta(id)).toEqual({ state: 'running', id, total: '2', created: String(START), done: '0', dead: '0', deadFail: '0', cancelled: '0', blocked: '0' });
      const page = (await h.store.page(id, '0', 100))!;
      expect(page.cursor).toBe('0');
      expect(page.nodes).toEqual([
        { ref: 'a', def: { t: 't', pt: 't', f: 'fail', i: 0, dl: 50, p: 2, g: 'g1', d: [], n: [] }, state: '', blocking: 0, json: '' },
        { ref: 'b', def: { t: 't', pt: 't', f: 'continue', i: 1, d: ['a'], n: [] }, state: '', blocking: 0, json: '' },
      ]);
      expect(h.engine.type('t').tasks.get(nodes.a.id)).toMatchObject({ state: 'waiting', priority: 2, group: 'g1', dueAt: START + 50 });
      expect(await h.store.page('nope', '0', 100)).toBeNull();
      expect(await h.store.meta('nope')).toBeNull();
    });

    it('a repeated submitFlow creates nothing twice and does not submit a node that ran', async () => {
      const h = harness({ step });
      const nodes: FlowNode[] = [{ ref: 'a', type: 'step', payload: {} }, { ref: 'b', type: 'step', payload: {}, dependsOn: ['a'] }];
      await h.flows.submitFlow(nodes, { id: 'rep' });
      await h.runDue();
      expect((await h.getFlow('rep')).state).toBe('completed');
      const again = await h.flows.submitFlow(nodes, { id: 'rep' });
      expect(again.created).toBe(false);
      expect(await h.runDue()).toBe(0);
      expect(refsOf(h.runs)).toEqual(['a', 'b']);
    });

    it('pages of 100 nodes: readFlow reads a flow of 250 nodes whole, the meta from the first page', async () => {
      const h = harness();
      const { id } = await h.flows.submitFlow(Array.from({ length: 250 }, (_, i) => ({ ref: `n${i}`, type: 't', payload: {}, dependsOn: i === 0 ? [] : ['n0'] })));
      const first = (await h.store.page(id, '0', 100))!;
      expect(first.cursor).not.toBe('0');
      expect(first.nodes).toHaveLength(100);
      const second = (await h.store.page(id, first.cursor, 100))!;
      expect(second.meta).toEqual({});
      const flow = await h.getFlow(id);
      expect(flow.nodes).toHaveLength(250);
      expect(flow.nodes[249].ref).toBe('n249');
      expect(statesOf(flow).n0).toBe('ready');
      expect(statesOf(flow).n1).toBe('pending');
    });
  });

  describe('cancelFlow', () => {
    it('parked, delayed and ready nodes are removed, a running one asked to stop; the flow ends cancelled', async () => {
      const h = harness();
      const { id, nodes } = await h.flows.submitFlow([
        { ref: 'run', type: 'hold', payload: {} },
        { ref: 'later', type: 'hold', payload: {}, delay: 1500 },
        { ref: 'ready', type: 'idle', payload: {} },
        { ref: 'parked', type: 'hold', payload: {}, dependsOn: ['run'] },
        { ref: 'parked2', type: 'idle', payload: {}, dependsOn: ['parked', 'later'] },
      ]);
      const running = h.engine.type('hold').tasks.get(nodes.run.id)!;
      Object.assign(running, { state: 'running', run: { attempt: 1, token: 't', leaseExpiresAt: START + 30_000, cancelled: false } });
      expect(statesOf(await h.getFlow(id))).toEqual({ run: 'running', later: 'delayed', ready: 'ready', parked: 'pending', parked2: 'pending' });

      expect(await h.flows.cancelFlow(id)).toEqual({ cancelled: 4, cancelRequested: 1 });
      expect(running.run!.cancelled).toBe(true);
      const flow = await h.getFlow(id);
      expect(flow).toMatchObject({ state: 'cancelled', endedAt: START, counts: { total: 5, completed: 0, dead: 0, cancelled: 5, blocked: 0 } });
      expect(flow.nodes.every((n) => n.state === 'cancelled')).toBe(true);
      expect((await h.delay.get('hold', nodes.parked.id)).state).toBe('unknown');
      expect((await h.delay.get('idle', nodes.parked2.id)).state).toBe('unknown');
      expect(h.ended.map((e) => e.state)).toEqual(['cancelled']);
      // the running node's late completion wins over its cancel; the flow keeps its end
      await h.progress.completed(nodes.run.id, '"late"');
      expect(await h.getFlow(id)).toMatchObject({ state: 'cancelled', endedAt: START, counts: { completed: 1, cancelled: 4 } });
      // a release for a cancelled parked node finds nothing
      expect(await h.store.release('hold', [[nodes.parked.id, 'run', '1']])).toEqual([]);
      expect(await h.flows.cancelFlow(id)).toEqual({ cancelled: 0, cancelRequested: 0 });
    });

    it('a completed flow: nothing to cancel, it stays completed; an unknown flow: zeros', async () => {
      const h = harness({ step });
      const { id } = await h.flows.submitFlow([{ ref: 'a', type: 'step', payload: {} }, { ref: 'b', type: 'step', payload: {}, dependsOn: ['a'] }]);
      await h.runDue();
      const ended = await h.getFlow(id);
      expect(await h.flows.cancelFlow(id)).toEqual({ cancelled: 0, cancelRequested: 0 });
      expect(await h.getFlow(id)).toEqual(ended);
      expect(await h.flows.cancelFlow('no-such-flow')).toEqual({ cancelled: 0, cancelRequested: 0 });
      expect(await h.store.cancelPage('no-such-flow', '0', 200)).toBeNull();
    });

    it('failed with blocked dependents: they are cancelled, the flow ends cancelled; a re-drive runs the dead node only', async () => {
      let mended = false;
      const h = harness({ step: ({ ref }) => { if (ref === 'dies' && !mended) throw new Error('broke'); return ref; } });
      const { id, nodes } = await h.flows.submitFlow([
        { ref: 'dies', type: 'step', payload: {} },
        { ref: 'child', type: 'step', payload: {}, dependsOn: ['dies'] },
        { ref: 'grand', type: 'step', payload: {}, dependsOn: ['child'] },
        { ref: 'solo', type: 'step', payload: {} },
      ]);
      await h.runDue();
      expect(await h.getFlow(id)).toMatchObject({ state: 'failed', counts: { total: 4, completed: 1, dead: 1, cancelled: 0, blocked: 2 } });
      h.clock.forward(10);
      expect(await h.flows.cancelFlow(id)).toEqual({ cancelled: 2, cancelRequested: 0 });
      const cancelled = await h.getFlow(id);
      expect(cancelled).toMatchObject({ state: 'cancelled', endedAt: START + 10, counts: { total: 4, completed: 1, dead: 1, cancelled: 2, blocked: 0 } });
      expect(statesOf(cancelled)).toEqual({ dies: 'dead', child: 'cancelled', grand: 'cancelled', solo: 'completed' });
      mended = true;
      expect(await h.delay.redrive('step', [nodes.dies.id], 1)).toBe(1);
      await h.runDue();
      expect(await h.getFlow(id)).toMatchObject({ state: 'cancelled', endedAt: START + 10, counts: { total: 4, completed: 2, dead: 0, cancelled: 2, blocked: 0 } });
      expect(refsOf(h.runs).sort()).toEqual(['dies', 'dies', 'solo']);
      expect(h.ended.map((e) => e.state)).toEqual(['failed', 'cancelled']);
    });

    it("completed under 'continue' with a blocked node: that node is cancelled and the flow ends cancelled", async () => {
      const h = harness({ step });
      const { id } = await h.flows.submitFlow([
        { ref: 'dies', type: 'step', payload: { die: true }, onFailure: 'continue' },
        { ref: 'child', type: 'step', payload: {}, dependsOn: ['dies'] },
        { ref: 'solo', type: 'step', payload: {} },
      ]);
      await h.runDue();
      expect((await h.getFlow(id)).state).toBe('completed');
      expect(await h.flows.cancelFlow(id)).toEqual({ cancelled: 1, cancelRequested: 0 });
      expect(await h.getFlow(id)).toMatchObject({ state: 'cancelled', counts: { total: 3, completed: 1, dead: 1, cancelled: 1, blocked: 0 } });
      expect(h.ended.map((e) => e.state)).toEqual(['completed', 'cancelled']);
    });
  });

  describe('retention and the index', () => {
    it('an ended flow expires retentionMs after its end (engine clock); listFlows prunes it; a running one stays', async () => {
      const h = harness({ step });
      const quick = await h.flows.submitFlow([{ ref: 'a', type: 'step', payload: {} }, { ref: 'b', type: 'step', payload: {}, dependsOn: ['a'] }], { id: 'quick' });
      const slow = await h.flows.submitFlow([{ ref: 'a', type: 'held', payload: {} }, { ref: 'b', type: 'held', payload: {}, dependsOn: ['a'] }], { id: 'slow' });
      h.clock.forward(100);
      await h.runDue();
      expect((await h.getFlow(quick.id))).toMatchObject({ state: 'completed', endedAt: START + 100 });
      expect(await h.store.newest(0, 10)).toEqual(expect.arrayContaining(['quick', 'slow']));
      h.clock.forward(RETENTION);
      expect(await h.flows.getFlow(quick.id)).not.toBeNull();
      h.clock.forward(1);
      expect(await h.flows.getFlow(quick.id)).toBeNull();
      expect(await h.store.meta(quick.id)).toBeNull();
      expect(await h.store.context(quick.id, 'b')).toEqual([]);
      expect(await h.store.settle(quick.id, [{ ref: 'a', outcome: 'c', json: '' }])).toEqual({ ended: '', replies: [{ changed: null, delta: 0, next: [], tell: [] }] });
      expect(await h.flows.getFlow(slow.id)).toMatchObject({ state: 'running' });
      expect((await h.flows.listFlows()).map((f) => f.id)).toEqual(['slow']);
      expect(await h.store.newest(0, 10)).toEqual(['slow']);
      // the id is free again: a new flow of it is created afresh
      const again = await h.flows.submitFlow([{ ref: 'z', type: 'step', payload: {} }], { id: 'quick' });
      expect(again.created).toBe(true);
      expect((await h.getFlow('quick')).nodes.map((n) => n.ref)).toEqual(['z']);
    });

    it('newest: newest first by created time, then by id (ZREVRANGE); offset and limit; listFlows without nodes', async () => {
      const h = harness();
      await h.store.indexed('b', 10);
      await h.store.indexed('a', 10);
      await h.store.indexed('c', 30);
      await h.store.indexed('d', 20);
      expect(await h.store.newest(0, 10)).toEqual(['c', 'd', 'b', 'a']);
      expect(await h.store.newest(1, 2)).toEqual(['d', 'b']);
      expect(await h.store.newest(4, 10)).toEqual([]);
      await h.store.unindex(['d', 'x']);
      expect(await h.store.newest(0, 10)).toEqual(['c', 'b', 'a']);
      const made = harness({ step });
      for (let i = 0; i < 3; i++) {
        await made.flows.submitFlow([{ ref: 'a', type: 'step', payload: {} }], { id: `flow-${i}` });
        await new Promise((resolve) => setTimeout(resolve, 2)); // submitFlow indexes by Date.now()
      }
      await made.runDue();
      const all = await made.flows.listFlows();
      expect(all.map((f) => f.id)).toEqual(['flow-2', 'flow-1', 'flow-0']);
      expect(all[0]).toEqual({ id: 'flow-2', state: 'completed', createdAt: START, endedAt: START, counts: { total: 1, completed: 1, dead: 0, cancelled: 0, blocked: 0 } });
      expect((await made.flows.listFlows(1, 1)).map((f) => f.id)).toEqual(['flow-1']);
    });
  });

  describe('the dead-letter sweep', () => {
    it('deadNodes lists buried nodes by time of death with their error now; swept removes them; sweepDead repairs a flow', async () => {
      const h = harness();
      const { id, nodes } = await h.flows.submitFlow([
        { ref: 'a', type: 't', payload: {} },
        { ref: 'b', type: 't', payload: {} },
        { ref: 'c', type: 't', payload: {}, dependsOn: ['a'] },
      ]);
      const bury = (ref: 'a' | 'b', at: number): string => {
        const task = h.engine.type('t').tasks.get(nodes[ref].id)!;
        const error: TaskErrorInfo = { name: 'LeaseExpiredError', message: 'lease expired', attempts: 1, failedAt: at };
        Object.assign(task, { state: 'dead', error, diedAt: at });
        h.engine.type('t').dead.add(task.id);
        h.store.nodeBuried('t', task.id, at, JSON.stringify(error));
        return JSON.stringify(error);
      };
      const errB = bury('b', START + 5);
      const errA = bury('a', START + 7);
      h.store.nodeBuried('t', 'plain-task', START, '{}'); // not a flow node: not noted
      expect(await h.store.deadNodes('t', 200)).toEqual([[nodes.b.id, START + 5, errB], [nodes.a.id, START + 7, errA]]);
      expect(await h.store.deadNodes('t', 1)).toEqual([[nodes.b.id, START + 5, errB]]);
      expect(await h.store.deadNodes('other', 200)).toEqual([]);
      // nothing told the flow yet (a crash after the burial): the sweep does
      expect((await h.getFlow(id)).counts.dead).toBe(0);
      await h.progress.sweepDead('t');
      expect(await h.store.deadNodes('t', 200)).toEqual([]);
      const flow = await h.getFlow(id);
      expect(flow).toMatchObject({ state: 'failed', counts: { total: 3, completed: 0, dead: 2, cancelled: 0, blocked: 1 } });
      expect(nodeOf(flow, 'a').error).toEqual(JSON.parse(errA));
      // re-driven before a sweep: its error is gone (the errors hash no longer holds it)
      bury('b', START + 9);
      await h.delay.redrive('t', [nodes.b.id], 1);
      expect(await h.store.deadNodes('t', 200)).toEqual([[nodes.b.id, START + 9, null]]);
      await h.store.swept('t', [nodes.b.id]);
      expect(await h.store.deadNodes('t', 200)).toEqual([]);
    });
  });

  describe('through the memory runner', () => {
    it('a diamond with a failing ignored branch runs to its end on MemoryRunner', async () => {
      const h = harness();
      const options = resolveModuleOptions({ waitForRedis: false });
      const worker = (type: string, handle: (task: Task) => unknown): DiscoveredWorker => ({
        type, className: type, handler: { handle }, options: mergeWorkerOptions(options.defaults, { concurrency: 4, maxAttempts: 1 }),
      });
      const seen: TaskFlow[] = [];
      const workers = [worker('dia', (task) => {
        seen.push(task.flow!);
        if (task.flow!.ref === 'c') throw new Error('c broke');
        return `${task.flow!.ref}!`;
      })];
      const runner = new MemoryRunner(h.engine, () => workers, new MemoryLimits(h.engine, () => undefined), new MemoryGroups(h.engine), new MemoryEventBus(), options);
      runner.flows = h.progress;
      const { id } = await h.flows.submitFlow([
        { ref: 'a', type: 'dia', payload: {} },
        { ref: 'b', type: 'dia', payload: {}, dependsOn: ['a'] },
        { ref: 'c', type: 'dia', payload: {}, dependsOn: ['a'], onFailure: 'ignore' },
        { ref: 'd', type: 'dia', payload: {}, dependsOn: ['b', 'c'] },
      ]);
      await runner.runDue();
      const flow = await h.getFlow(id);
      expect(flow).toMatchObject({ state: 'completed', counts: { total: 4, completed: 3, dead: 1, cancelled: 0, blocked: 0 } });
      const d = seen.find((f) => f.ref === 'd')!;
      expect(d.results).toEqual({ b: 'b!' });
      expect(Object.keys(d.failed)).toEqual(['c']);
      expect(seen.map((f) => f.ref).filter((r) => r === 'd')).toHaveLength(1);
      runner.stopAll();
    });
  });
});
