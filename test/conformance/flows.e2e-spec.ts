/**
 * Conformance: flows, tasks that wait for other tasks (README "Flows: tasks that wait for other tasks"),
 * through `TaskFlowService` and the other public services only (every engine).
 *
 * Pins down:
 * - submitFlow's answer (`{ id, created, nodes: { ref: { type, id: '&<flow>:<ref>' } } }`);
 * - a chain: each node starts after the one before it completed and reads its result in `task.flow`
 *   (`{ id, ref, results, failed }`); a diamond: the join starts once, after both branches, with both results;
 * - getFlow: state (`running`, then `completed`, `failed`, `cancelled`), createdAt / endedAt, counts, and every
 *   node in the order given (`{ ref, type, id, state, dependsOn, onFailure, result? , error? }`): `pending`
 *   while it waits for dependencies, its task's `ready` / `delayed` meanwhile, then `completed`, `dead`,
 *   `blocked`, `cancelled`; a node's getTask is `pending` before its dependencies end; getFlow of an unknown
 *   id is null, of a bad id an InvalidFlowError;
 * - onFailure: `fail` (the default: dependents and theirs blocked, an independent branch still runs, the flow
 *   ends failed), `continue` (dependents blocked, the flow ends completed), `ignore` (the dependent runs with
 *   the error in `task.flow.failed`, the flow completes); re-driving the dead node resumes a failed flow;
 * - cancelFlow: `{ cancelled, cancelRequested }` (a parked and a waiting node cancelled, a running one asked to
 *   stop: its signal aborts with TaskCancelledError); the flow ends cancelled, every node cancelled; again, or
 *   an unknown flow: nothing; a node cannot be cancelled through TaskSubmitService.cancel
 *   (InvalidSubmitOptionsError);
 * - onFlowEnded: `{ flowId, state, at }` once per end (completed, failed, cancelled); its removal stops it;
 * - bad input: InvalidFlowError naming the node's ref (or none for the flow as a whole), nothing written;
 * - the same flow id twice: `created: false`, nothing changed, nothing run again (also once it completed).
 *
 * NOTE: on Redis a dead node's flow learns of its death in a call after the burial, so `settle` may return
 * before the flow ends (or before a dependent under `ignore` is released); the cases then read the flow until it
 * ended (bounded, `ended`): the memory engine has ended it when `settle` returns.
 */
import { Inject, Injectable } from '@nestjs/common';
import {
  InvalidFlowError, InvalidSubmitOptionsError, TaskCancelledError, TaskFlowService,
  type FlowEndedEvent, type FlowInfo, type FlowNode, type Task, type TaskFlow,
} from 'nestjs-distributed-queue';
import { untilAborted, workerClass } from '../support/queue-app';
import { deferred, describeEngines, rejectionOf, type EngineOptions, until } from './engine';

interface Job {
  /** Returned as the node's result (else `<ref>:<its results' refs, sorted, joined by +>`). */
  value?: unknown;
  /** Returns the sum of its dependencies' results plus this. */
  add?: number;
  /** Throws (maxAttempts 1: the node dies) unless `healed`. */
  die?: boolean;
  /** Waits until its signal aborts. */
  listen?: boolean;
}

const runs: { ref: string; flow: TaskFlow | undefined; attempt: number }[] = [];
const reasons: unknown[] = [];
const ended: FlowEndedEvent[] = [];
let started = deferred();
let healed = false;

let flows!: TaskFlowService;

/** Not a worker: it hands the case the engine's TaskFlowService (the Engine has the four services only). */
@Injectable()
class FlowsProbe {
  constructor(@Inject(TaskFlowService) service: TaskFlowService) {
    flows = service;
  }
}

const handle = async (task: Task<Job>, signal: AbortSignal): Promise<unknown> => {
  const ref = task.flow?.ref ?? task.id;
  runs.push({ ref, flow: task.flow && JSON.parse(JSON.stringify(task.flow)), attempt: task.attempt });
  const job = task.payload ?? {};
  if (job.listen) {
    started.resolve();
    await untilAborted(signal).catch((reason: unknown) => reasons.push(reason));
    return undefined;
  }
  if (job.die && !healed) throw new Error(`${ref} broke`);
  const results = task.flow?.results ?? {};
  if (job.add !== undefined) return Object.values(results).reduce((sum: number, r) => sum + (r as number), 0) + job.add;
  if ('value' in job) return job.value;
  return `${ref}:${Object.keys(results).sort().join('+')}`;
};
const Worker = workerClass<Job>('fl', { concurrency: 1, maxAttempts: 1 }, handle);
const Other = workerClass<Job>('fo', { concurrency: 1, maxAttempts: 1 }, handle);
const Ordered = workerClass('fq', { ordered: true }, () => undefined);
const ROUTE: EngineOptions = { route: { qId: 'cff', partitions: 2 } };

const ENDED = ['completed', 'failed', 'cancelled'];
const refs = () => runs.map((r) => r.ref);
const node = (flow: FlowInfo, ref: string) => flow.nodes.find((n) => n.ref === ref)!;
const states = (flow: FlowInfo) => Object.fromEntries(flow.nodes.map((n) => [n.ref, n.state]));

/** The flow once it ended (see the NOTE above). */
const endOf = (id: string): Promise<FlowInfo> =>
  until(async () => {
    const flow = await flows.getFlow(id);
    return flow && ENDED.includes(flow.state) ? flow : null;
  }, `flow ${id} ended`);

describeEngines('flows', (start) => {
  afterEach(() => {
    runs.length = 0;
    reasons.length = 0;
    ended.length = 0;
    started.resolve();
    started = deferred();
    healed = false;
  });

  it('a chain: each node waits (pending) until the one before it completed, and reads its result', async () => {
    const engine = await start({}, [Worker, FlowsProbe]);
    await engine.control.pause('fl');
    const submitted = await flows.submitFlow([
      { ref: 'a', type: 'fl', payload: { add: 1 } },
      { ref: 'b', type: 'fl', payload: { add: 10 }, dependsOn: ['a'] },
      { ref: 'c', type: 'fl', payload: { add: 100 }, dependsOn: ['b'] },
      { ref: 'later', type: 'fl', payload: { value: 'late' }, delay: 60_000 },
    ], { id: 'chain' });
    expect(submitted).toEqual({
      id: 'chain', created: true,
      nodes: { a: { type: 'fl', id: '&chain:a' }, b: { type: 'fl', id: '&chain:b' }, c: { type: 'fl', id: '&chain:c' }, later: { type: 'fl', id: '&chain:later' } },
    });
    const waiting = (await flows.getFlow('chain'))!;
    expect(waiting).toEqual({
      id: 'chain', state: 'running', createdAt: expect.any(Number), counts: { total: 4, completed: 0, dead: 0, cancelled: 0, blocked: 0 },
      nodes: [
        { ref: 'a', type: 'fl', id: '&chain:a', state: 'ready', dependsOn: [], onFailure: 'fail' },
        { ref: 'b', type: 'fl', id: '&chain:b', state: 'pending', dependsOn: ['a'], onFailure: 'fail' },
        { ref: 'c', type: 'fl', id: '&chain:c', state: 'pending', dependsOn: ['b'], onFailure: 'fail' },
        { ref: 'later', type: 'fl', id: '&chain:later', state: 'delayed', dependsOn: [], onFailure: 'fail' },
      ],
    });
    expect(await engine.inspect.getState('fl', '&chain:b')).toBe('pending');
    expect(await engine.inspect.getState('fl', '&chain:a')).toBe('ready');
    expect(await engine.inspect.getCounts('fl')).toEqual({ delayed: 1, ready: 1, running: 0, dead: 0, done: 0 });

    await engine.control.resume('fl');
    await engine.settle(['fl']);
    expect(refs()).toEqual(['a', 'b', 'c']);
    expect(runs.map((r) => r.flow)).toEqual([
      { id: 'chain', ref: 'a', results: {}, failed: {} },
      { id: 'chain', ref: 'b', results: { a: 1 }, failed: {} },
      { id: 'chain', ref: 'c', results: { b: 11 }, failed: {} },
    ]);
    const running = (await flows.getFlow('chain'))!;
    expect(running.state).toBe('running');
    expect(states(running)).toEqual({ a: 'completed', b: 'completed', c: 'completed', later: 'delayed' });
    expect(node(running, 'c')).toEqual({ ref: 'c', type: 'fl', id: '&chain:c', state: 'completed', dependsOn: ['b'], onFailure: 'fail', result: 111 });
    expect(running.counts).toEqual({ total: 4, completed: 3, dead: 0, cancelled: 0, blocked: 0 });
    expect(await engine.inspect.getTask('fl', '&chain:c')).toEqual({ id: '&chain:c', type: 'fl', state: 'done', result: 111 });
  });

  it('a diamond: the join starts once, after both branches completed, and reads both results', async () => {
    const engine = await start({}, [Worker, FlowsProbe]);
    const events: FlowEndedEvent[] = [];
    flows.onFlowEnded((e) => void events.push(e));
    // given join first: getFlow keeps the order given
    const { id } = await flows.submitFlow([
      { ref: 'd', type: 'fl', payload: {}, dependsOn: ['b', 'c'] },
      { ref: 'b', type: 'fl', payload: {}, dependsOn: ['a'] },
      { ref: 'c', type: 'fl', payload: {}, dependsOn: ['a'] },
      { ref: 'a', type: 'fl', payload: {} },
    ]);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    await engine.settle(['fl']);
    const flow = await endOf(id);
    expect(refs()[0]).toBe('a');
    expect(refs().slice(1, 3).sort()).toEqual(['b', 'c']);
    expect(refs()[3]).toBe('d');
    expect(runs).toHaveLength(4);
    expect(runs[3].flow).toEqual({ id, ref: 'd', results: { b: 'b:a', c: 'c:a' }, failed: {} });
    expect(flow).toEqual({
      id, state: 'completed', createdAt: expect.any(Number), endedAt: expect.any(Number), counts: { total: 4, completed: 4, dead: 0, cancelled: 0, blocked: 0 },
      nodes: [
        { ref: 'd', type: 'fl', id: `&${id}:d`, state: 'completed', dependsOn: ['b', 'c'], onFailure: 'fail', result: 'd:b+c' },
        { ref: 'b', type: 'fl', id: `&${id}:b`, state: 'completed', dependsOn: ['a'], onFailure: 'fail', result: 'b:a' },
        { ref: 'c', type: 'fl', id: `&${id}:c`, state: 'completed', dependsOn: ['a'], onFailure: 'fail', result: 'c:a' },
        { ref: 'a', type: 'fl', id: `&${id}:a`, state: 'completed', dependsOn: [], onFailure: 'fail', result: 'a:' },
      ],
    });
    expect(flow.endedAt!).toBeGreaterThanOrEqual(flow.createdAt);
    await until(async () => events.length > 0, 'the flow end heard');
    expect(events).toEqual([{ flowId: id, state: 'completed', at: expect.any(Number) }]);
    expect(await flows.getFlow('never-submitted')).toBeNull();
    expect(await rejectionOf(flows.getFlow('bad id!'))).toBeInstanceOf(InvalidFlowError);
  });

  it('onFailure fail (the default) blocks the dead node\'s dependents, transitively; continue blocks them but completes', async () => {
    const engine = await start({}, [Worker, FlowsProbe]);
    const remove = flows.onFlowEnded((e) => void ended.push(e));
    await flows.submitFlow([
      { ref: 'bad', type: 'fl', payload: { die: true } },
      { ref: 'child', type: 'fl', payload: {}, dependsOn: ['bad'] },
      { ref: 'grandchild', type: 'fl', payload: {}, dependsOn: ['child'] },
      { ref: 'free', type: 'fl', payload: {} },
    ], { id: 'failing' });
    await flows.submitFlow([
      { ref: 'bad', type: 'fl', payload: { die: true }, onFailure: 'continue' },
      { ref: 'child', type: 'fl', payload: {}, dependsOn: ['bad'] },
      { ref: 'free', type: 'fl', payload: {} },
    ], { id: 'going-on' });
    await engine.settle(['fl']);
    const failed = await endOf('failing');
    const goingOn = await endOf('going-on');
    expect(refs().sort()).toEqual(['bad', 'bad', 'free', 'free']);

    expect(failed.state).toBe('failed');
    expect(failed.counts).toEqual({ total: 4, completed: 1, dead: 1, cancelled: 0, blocked: 2 });
    expect(states(failed)).toEqual({ bad: 'dead', child: 'blocked', grandchild: 'blocked', free: 'completed' });
    expect(node(failed, 'bad')).toMatchObject({
      ref: 'bad', type: 'fl', id: '&failing:bad', state: 'dead', dependsOn: [], onFailure: 'fail',
      error: { name: 'Error', message: 'bad broke', attempts: 1, failedAt: expect.any(Number) },
    });
    expect(await engine.inspect.getTask('fl', '&failing:bad')).toMatchObject({ state: 'dead', attempts: 1, lastError: { name: 'Error', message: 'bad broke' } });
    expect(await engine.inspect.getState('fl', '&failing:child')).toBe('pending');

    expect(goingOn.state).toBe('completed');
    expect(goingOn.counts).toEqual({ total: 3, completed: 1, dead: 1, cancelled: 0, blocked: 1 });
    expect(states(goingOn)).toEqual({ bad: 'dead', child: 'blocked', free: 'completed' });
    expect(node(goingOn, 'bad').onFailure).toBe('continue');

    await until(async () => ended.length === 2, 'two flow ends heard');
    expect(ended.map((e) => [e.flowId, e.state]).sort()).toEqual([['failing', 'failed'], ['going-on', 'completed']]);
    remove();
    await flows.submitFlow([{ ref: 'x', type: 'fl', payload: {} }], { id: 'unheard' });
    await engine.settle(['fl']);
    expect((await endOf('unheard')).state).toBe('completed');
    expect(ended).toHaveLength(2);
    // the dead node's error as getFlow reads it from the flow's record: no stack
    expect(node(failed, 'bad')).toEqual({
      ref: 'bad', type: 'fl', id: '&failing:bad', state: 'dead', dependsOn: [], onFailure: 'fail',
      error: { name: 'Error', message: 'bad broke', attempts: 1, failedAt: expect.any(Number) },
    });
  });

  it('onFailure ignore: the dependent runs with the error in task.flow.failed; a re-drive resumes a failed flow', async () => {
    const engine = await start({}, [Worker, FlowsProbe]);
    await flows.submitFlow([
      { ref: 'bad', type: 'fl', payload: { die: true }, onFailure: 'ignore' },
      { ref: 'ok', type: 'fl', payload: { value: 7 } },
      { ref: 'after', type: 'fl', payload: {}, dependsOn: ['bad', 'ok'] },
    ], { id: 'ignoring' });
    await engine.settle(['fl']);
    const ignoring = await endOf('ignoring');
    expect(ignoring.state).toBe('completed');
    expect(ignoring.counts).toEqual({ total: 3, completed: 2, dead: 1, cancelled: 0, blocked: 0 });
    expect(states(ignoring)).toEqual({ bad: 'dead', ok: 'completed', after: 'completed' });
    const after = runs.find((r) => r.ref === 'after')!;
    expect(after.flow).toMatchObject({
      id: 'ignoring', ref: 'after', results: { ok: 7 },
      failed: { bad: { name: 'Error', message: 'bad broke', attempts: 1, failedAt: expect.any(Number) } },
    });
    expect(Object.keys(after.flow!.failed)).toEqual(['bad']);
    expect(node(ignoring, 'after').result).toBe('after:ok');

    // fail: re-driving the dead node (now healed) runs it, then its dependents; the flow completes
    await flows.submitFlow([
      { ref: 'flaky', type: 'fl', payload: { die: true } },
      { ref: 'next', type: 'fl', payload: {}, dependsOn: ['flaky'] },
    ], { id: 'resumed' });
    await engine.settle(['fl']);
    expect((await endOf('resumed')).state).toBe('failed');
    healed = true;
    expect(await engine.inspect.redriveDead('fl', ['&resumed:flaky'])).toBe(1);
    await engine.settle(['fl']);
    const resumed = await until(async () => {
      const flow = await flows.getFlow('resumed');
      return flow?.state === 'completed' ? flow : null;
    }, 'the resumed flow completed');
    expect(states(resumed)).toEqual({ flaky: 'completed', next: 'completed' });
    expect(resumed.counts).toEqual({ total: 2, completed: 2, dead: 0, cancelled: 0, blocked: 0 });
    expect(refs().filter((r) => ['flaky', 'next'].includes(r))).toEqual(['flaky', 'flaky', 'next']);
    expect(runs.find((r) => r.ref === 'next')!.flow!.results).toEqual({ flaky: 'flaky:' });
    // the error a dependent reads under `ignore`, as the flow's record keeps it: no stack
    expect(after.flow!.failed).toEqual({ bad: { name: 'Error', message: 'bad broke', attempts: 1, failedAt: expect.any(Number) } });
    expect(node(ignoring, 'bad').error).toEqual({ name: 'Error', message: 'bad broke', attempts: 1, failedAt: expect.any(Number) });
  });

  it('cancelFlow: parked and waiting nodes cancelled, a running one asked to stop; the flow ends cancelled', async () => {
    const engine = await start({}, [Worker, Other, FlowsProbe]);
    flows.onFlowEnded((e) => void ended.push(e));
    await engine.control.pause('fo');
    await flows.submitFlow([
      { ref: 'run', type: 'fl', payload: { listen: true } },
      { ref: 'wait', type: 'fo', payload: {} },
      { ref: 'parked', type: 'fl', payload: {}, dependsOn: ['run', 'wait'] },
    ], { id: 'cx' });
    const settled = engine.settle(['fl']);
    await started.promise;
    expect(states((await flows.getFlow('cx'))!)).toEqual({ run: 'running', wait: 'ready', parked: 'pending' });
    // a node is cancelled through its flow only
    const refused = await rejectionOf(engine.submit.cancel('fo', '&cx:wait'));
    expect(refused).toBeInstanceOf(InvalidSubmitOptionsError);
    expect(await engine.inspect.getState('fo', '&cx:wait')).toBe('ready');

    expect(await flows.cancelFlow('cx')).toEqual({ cancelled: 2, cancelRequested: 1 });
    await settled;
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(TaskCancelledError);
    const flow = await endOf('cx');
    expect(flow).toMatchObject({ id: 'cx', state: 'cancelled', counts: { total: 3, completed: 0, dead: 0, cancelled: 3, blocked: 0 } });
    expect(flow.endedAt).toEqual(expect.any(Number));
    expect(states(flow)).toEqual({ run: 'cancelled', wait: 'cancelled', parked: 'cancelled' });
    expect(await Promise.all([['fl', 'run'], ['fo', 'wait'], ['fl', 'parked']].map(([type, ref]) => engine.inspect.getState(type, `&cx:${ref}`))))
      .toEqual(['unknown', 'unknown', 'unknown']);
    await until(async () => ended.length > 0, 'the flow end heard');
    expect(ended).toEqual([{ flowId: 'cx', state: 'cancelled', at: expect.any(Number) }]);

    expect(await flows.cancelFlow('cx')).toEqual({ cancelled: 0, cancelRequested: 0 });
    expect(await flows.cancelFlow('never-submitted')).toEqual({ cancelled: 0, cancelRequested: 0 });
    await engine.control.resume('fo');
    await engine.settle(['fl', 'fo']);
    expect(refs()).toEqual(['run']);
    expect((await flows.getFlow('cx'))!.state).toBe('cancelled');
    expect(ended).toHaveLength(1);
  });

  it('bad flows are InvalidFlowError naming the node (none for the flow), and write nothing', async () => {
    const engine = await start(ROUTE, [Worker, Ordered, FlowsProbe]);
    await engine.control.pause('fl');
    const d = (ref: string, extra: Partial<FlowNode> = {}): FlowNode => ({ ref, type: 'fl', payload: {}, ...extra });
    const bad: [string, unknown, string | undefined, object?][] = [
      ['cycle', [d('root'), d('a', { dependsOn: ['root', 'b'] }), d('b', { dependsOn: ['a'] })], 'a|b'],
      ['self-dependency', [d('a'), d('self', { dependsOn: ['self'] })], 'self'],
      ['unknown dependency', [d('a'), d('b', { dependsOn: ['a', 'zz'] })], 'b'],
      ['duplicate ref', [d('a'), d('b'), d('a', { dependsOn: ['b'] })], 'a'],
      ['unknown type', [d('a'), { ref: 'x', type: 'no-such-type', payload: {}, dependsOn: ['a'] }], 'x'],
      ['unknown option', [d('a'), { ...d('b'), delayMs: 5 } as FlowNode], 'b'],
      ['ordered node without key', [d('a'), { ref: 'o', type: 'fq', payload: {}, dependsOn: ['a'] }], 'o'],
      ['key on a delay type', [d('a'), d('b', { key: 'k' })], 'b'],
      ['group on an ordered type', [{ ref: 'o', type: 'fq', payload: {}, key: 'k', group: 'g' }], 'o'],
      ['bad onFailure', [d('f', { onFailure: 'retry' as never })], 'f'],
      ['negative delay', [d('a'), d('late', { delay: -1, dependsOn: ['a'] })], 'late'],
      ['priority 1001', [d('p', { priority: 1001 })], 'p'],
      ['empty ref', [d('')], undefined],
      ['empty array', [], undefined],
      ['not an array', { a: d('a') }, undefined],
      ['unknown flow option', [d('a')], undefined, { id: 'bad-x', retries: 1 }],
      ['flow id with a space', [d('a')], undefined, { id: 'has space' }],
      ['flow id starting with &', [d('a')], undefined, { id: '&x' }],
      ['flow id of 65 characters', [d('a')], undefined, { id: 'x'.repeat(65) }],
    ];
    for (const [cell, nodes, ref, options] of bad) {
      const error = await rejectionOf(flows.submitFlow(nodes as FlowNode[], (options ?? { id: 'bad-flow' }) as { id?: string }));
      expect([cell, error]).toEqual([cell, expect.any(InvalidFlowError)]);
      if (ref === undefined) expect([cell, (error as InvalidFlowError).ref]).toEqual([cell, undefined]);
      else expect([cell, ref.split('|')]).toEqual([cell, expect.arrayContaining([(error as InvalidFlowError).ref])]);
    }
    expect(await flows.getFlow('bad-flow')).toBeNull();
    expect(await flows.getFlow('bad-x')).toBeNull();
    expect(await flows.listFlows()).toEqual([]);
    for (const ref of ['a', 'b', 'root', 'self', 'f', 'late', 'p']) expect(await engine.inspect.getState('fl', `&bad-flow:${ref}`)).toBe('unknown');
    expect(await engine.inspect.getCounts('fl')).toEqual({ delayed: 0, ready: 0, running: 0, dead: 0, done: 0 });
  });

  it('the same flow id twice: created false, nothing changed; once it completed, nothing runs again', async () => {
    const engine = await start({}, [Worker, FlowsProbe]);
    await engine.control.pause('fl');
    const first = await flows.submitFlow([
      { ref: 'a', type: 'fl', payload: { value: 'first' } },
      { ref: 'b', type: 'fl', payload: {}, dependsOn: ['a'] },
    ], { id: 'order-42' });
    expect(first).toEqual({ id: 'order-42', created: true, nodes: { a: { type: 'fl', id: '&order-42:a' }, b: { type: 'fl', id: '&order-42:b' } } });
    const before = await flows.getFlow('order-42');
    const again = await flows.submitFlow([
      { ref: 'a', type: 'fl', payload: { value: 'other' } },
      { ref: 'c', type: 'fl', payload: {} },
      { ref: 'b', type: 'fl', payload: {}, dependsOn: ['a', 'c'] },
    ], { id: 'order-42' });
    expect(again).toMatchObject({ id: 'order-42', created: false });
    expect(await flows.getFlow('order-42')).toEqual(before);
    expect(await engine.inspect.getTask('fl', '&order-42:a')).toMatchObject({ state: 'ready', payload: { value: 'first' } });
    expect(await engine.inspect.getState('fl', '&order-42:c')).toBe('unknown');
    expect(await engine.inspect.getCounts('fl')).toEqual({ delayed: 0, ready: 1, running: 0, dead: 0, done: 0 });

    await engine.control.resume('fl');
    await engine.settle(['fl']);
    const done = await endOf('order-42');
    expect(done.state).toBe('completed');
    expect(refs()).toEqual(['a', 'b']);
    expect(runs[1].flow!.results).toEqual({ a: 'first' });

    const late = await flows.submitFlow([{ ref: 'a', type: 'fl', payload: { value: 'late' } }], { id: 'order-42' });
    expect(late).toMatchObject({ id: 'order-42', created: false });
    await engine.settle(['fl']);
    expect(refs()).toEqual(['a', 'b']);
    expect(await flows.getFlow('order-42')).toEqual(done);
    expect((await engine.inspect.getCounts('fl')).ready).toBe(0);
  });
});
