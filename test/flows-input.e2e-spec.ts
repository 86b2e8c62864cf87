/**
 * Flows (issue 30): bad flows are refused before anything is written, against real Redis (single server and
 * cluster). Each cell submits to an application without workers (types 'd', a delay-queue type, and 'o', an
 * ordered one) and compares every key under the test's prefix, on every master, before and after.
 *
 * Failure matrix (each cell a test below):
 * | capability          | cell                                                                                  |
 * |---------------------|---------------------------------------------------------------------------------------|
 * | graph               | cycle, self-dependency, unknown ref, duplicate ref, dependsOn not an array or naming  |
 * |                     | a node twice: InvalidFlowError with the node's ref, nothing written                   |
 * | node options        | unknown type, unknown option, ordered node without key, key on a delay type,         |
 * |                     | priority or group on an ordered type, bad priority (1001, -1, 1.5), bad group, bad    |
 * |                     | onFailure, negative delay, bad ref: InvalidFlowError with the ref, nothing written    |
 * | the flow            | empty array, non-array, a node that is not an object, bad flow id (space, '&', 65     |
 * |                     | characters): InvalidFlowError, nothing written                                        |
 * | payload             | larger than maxPayloadBytes: PayloadTooLargeError (a defect, fixed); not               |
 * |                     | JSON-serialisable: refused; nothing written                                           |
 * | same id twice       | the second submit returns created: false and changes nothing (other nodes, payloads)  |
 * | id reused, expiring | the record's head gone before its other hashes (they expire apart): the new flow has  |
 * |                     | only its own nodes, nothing of the old one                                            |
 */
import 'reflect-metadata';
import { InvalidFlowError, PayloadTooLargeError, type FlowNode } from 'nestjs-distributed-queue';
import { flowKeys } from 'nestjs-distributed-queue/flow/flow-keys';
import { flowsOf, keysUnder, nodeOf } from './support/flow-nodes';
import { useQueueApps } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep } from './support/wait';

const d = (ref: string, extra: Partial<FlowNode> = {}): FlowNode => ({ ref, type: 'd', payload: { ref }, ...extra });
const o = (ref: string, extra: Partial<FlowNode> = {}): FlowNode => ({ ref, type: 'o', payload: { ref }, key: 'k1', ...extra });

/** [cell, nodes, the ref the error names (undefined: the flow's), options of submitFlow] */
const BAD: [string, unknown, string | undefined, { id?: string }?][] = [
  ['cycle', [d('root'), d('a', { dependsOn: ['root', 'b'] }), d('b', { dependsOn: ['a'] })], 'a|b'],
  ['longer cycle', [d('a', { dependsOn: ['c'] }), d('b', { dependsOn: ['a'] }), d('c', { dependsOn: ['b'] })], 'a|b|c'],
  ['self-dependency', [d('a'), d('self', { dependsOn: ['a', 'self'] })], 'self'],
  ['unknown ref', [d('a'), d('b', { dependsOn: ['a', 'zz'] })], 'b'],
  ['duplicate ref', [d('a'), d('b'), d('a', { dependsOn: ['b'] })], 'a'],
  ['dependsOn not an array', [d('a'), d('b', { dependsOn: 'a' as never })], 'b'],
  ['dependsOn naming a node twice', [d('a'), d('b', { dependsOn: ['a', 'a'] })], 'b'],
  ['unknown type', [d('a'), { ref: 'x', type: 'no-such-type', payload: {}, dependsOn: ['a'] }], 'x'],
  ['unknown option', [d('a'), { ...d('b'), delayMs: 5 } as FlowNode], 'b'],
  ['ordered node without key', [d('a'), o('ord', { key: undefined, dependsOn: ['a'] })], 'ord'],
  ['ordered node with an empty key', [o('ord', { key: '' })], 'ord'],
  ['key on a delay type', [d('a'), d('b', { key: 'k' })], 'b'],
  ['priority on an ordered type', [o('ord', { priority: 1 })], 'ord'],
  ['group on an ordered type', [o('ord', { group: 'g' })], 'ord'],
  ['priority 1001', [d('a'), d('p', { priority: 1001 })], 'p'],
  ['priority -1', [d('p', { priority: -1 })], 'p'],
  ['priority 1.5', [d('p', { priority: 1.5 })], 'p'],
  ['bad group', [d('g', { group: '' })], 'g'],
  ['bad onFailure', [d('f', { onFailure: 'retry' as never })], 'f'],
  ['negative delay', [d('a'), d('late', { delay: -1, dependsOn: ['a'] })], 'late'],
  ['delay not a number', [d('late', { delay: '5' as never })], 'late'],
  ['empty ref', [d('')], undefined],
  ['ref with a control character', [d('a\nb')], undefined],
  ['empty array', [], undefined],
  ['not an array', { a: d('a') }, undefined],
  ['a node that is not an object', [d('a'), 'b'], undefined],
  ['flow id with a space', [d('a')], undefined, { id: 'has space' }],
  ['flow id starting with &', [d('a')], undefined, { id: '&x' }],
  ['flow id of 65 characters', [d('a')], undefined, { id: 'x'.repeat(65) }],
];

describe.each(getTargets().map((t) => [t.name, t] as const))('bad flows on %s', (_name, target: RedisTarget) => {
  const { start, redis } = useQueueApps(target);

  async function inputApp(label: string) {
    const prefix = uniquePrefix(label);
    const app = await start({
      connection: target.connection, keyPrefix: prefix, workers: false, maxPayloadBytes: 1000,
      types: { d: {}, o: { ordered: true } }, route: routeTestOptions(`q-${label}`, 'm1'),
    });
    await sleep(200); // the route's first heartbeat written
    return { flows: flowsOf(app), app, prefix, keys: () => keysUnder(redis(), prefix) };
  }

  // rows as objects: a row shorter than the test's parameters would hand it Jest's `done` callback
  it.each(BAD.map(([cell, nodes, ref, options]) => ({ cell, nodes, ref, options })))('$cell: InvalidFlowError, nothing written', async ({ nodes, ref, options }) => {
    const { flows, keys } = await inputApp('flow-bad');
    const before = await keys();
    const error = await flows.submitFlow(nodes as FlowNode[], options).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidFlowError);
    if (ref === undefined) expect((error as InvalidFlowError).ref).toBeUndefined();
    else expect(ref.split('|')).toContain((error as InvalidFlowError).ref);
    expect(await keys()).toEqual(before);
  });

  // A defect fixed: planFlow (flow/flow-plan.ts) wrapped every error of planNode that was not an
  // InvalidFlowError into one, so encodePayload's PayloadTooLargeError arrived as InvalidFlowError.
  it('a payload larger than maxPayloadBytes: PayloadTooLargeError, nothing written', async () => {
    const { flows, keys } = await inputApp('flow-big');
    const before = await keys();
    const error = await flows.submitFlow([d('a'), d('big', { payload: 'x'.repeat(2000), dependsOn: ['a'] })]).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(await keys()).toEqual(before);
  });

  it('a payload that is not JSON-serialisable: refused, nothing written', async () => {
    const { flows, keys } = await inputApp('flow-nojson');
    const before = await keys();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(flows.submitFlow([d('a'), d('b', { payload: circular })])).rejects.toThrow();
    await expect(flows.submitFlow([d('a', { payload: 10n as never })])).rejects.toThrow();
    expect(await keys()).toEqual(before);
  });

  it('the same flow id twice: the second returns created: false and changes nothing', async () => {
    const { flows, app, keys } = await inputApp('flow-twice');
    const first = await flows.submitFlow([d('a'), d('b', { dependsOn: ['a'] })], { id: 'order-42' });
    expect(first).toEqual({ id: 'order-42', created: true, nodes: { a: { type: 'd', id: '&order-42:a' }, b: { type: 'd', id: '&order-42:b' } } });
    const flow = await flows.getFlow('order-42');
    const before = await keys();
    const again = await flows.submitFlow([d('a', { payload: 'other' }), d('c'), d('b', { dependsOn: ['a', 'c'] })], { id: 'order-42' });
    expect(again.created).toBe(false);
    expect(again.id).toBe('order-42');
    // NOTE: a repeat submits the flow's roots again (it may follow a call that failed before them): their ids
    // exist, so nothing is created; only the submit's reply bucket (kept 60 s) may be new.
    const requestKey = (k: string): boolean => /:rb:/.test(k);
    expect((await keys()).filter((k) => !requestKey(k))).toEqual(before.filter((k) => !requestKey(k)));
    expect(await flows.getFlow('order-42')).toEqual(flow);
    expect(nodeOf(flow!, 'b').dependsOn).toEqual(['a']);
    expect((await app.inspect.getTask('d', '&order-42:a')).payload).toEqual({ ref: 'a' });
    expect((await app.inspect.getTask('d', '&order-42:c')).state).toBe('unknown');
  });

  it("an id reused while the old record's hashes expire apart: the new flow has only its own nodes", async () => {
    const { flows, prefix } = await inputApp('flow-reuse');
    await flows.submitFlow([d('old1'), d('old2', { dependsOn: ['old1'] })], { id: 'reused' });
    // the record's head expired first; its other hashes are still there
    await redis().del(flowKeys(prefix, 'reused')[0]);
    const again = await flows.submitFlow([d('new1')], { id: 'reused' });
    expect(again.created).toBe(true);
    const flow = (await flows.getFlow('reused'))!;
    expect(flow.nodes.map((n) => n.ref)).toEqual(['new1']);
    expect(flow.counts.total).toBe(1);
  });
});
