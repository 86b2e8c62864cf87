/**
 * Flows (issue 30): a dependency lost with its worker on its last attempt is not forgotten. Its lease expires
 * with no attempt left, so it is buried by the queue, not by its worker: the flow learns it from the
 * dead-letter sweep (every 5 s), ends 'failed', and the node's dependents never run (single and cluster:
 * the types on three masters). The rest of the crash matrix: test/flows-crash.e2e-spec.ts.
 *
 * Failure matrix (one test):
 * | capability                      | cell                                                                       |
 * |---------------------------------|----------------------------------------------------------------------------|
 * | a dependency dies on its last   | 2 replicas of every type (worker processes); the one running x             |
 * | attempt with its process        | (maxAttempts 1, x <- y <- z, beside w <- v) SIGKILLed: x dead, y and z      |
 * |                                 | blocked and never started, w and v completed, the flow 'failed' within 20 s |
 */
import { TaskFlowService, type FlowNode } from 'nestjs-distributed-queue';
import { afterDeathOf, flowsEnded, records, rolesOn, useCrashRig, violations, WorkerFleet } from './fixtures/flows-crash-support';
import { nodeOf } from './support/flow-nodes';
import { connect, startQueueApp } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('a flow whose dependency dies with its worker on %s', (_name, target: RedisTarget) => {
  const rig = useCrashRig();
  const redis = connect(target);
  afterAll(() => redis.disconnect());

  it('SIGKILL of the process running a node on its last attempt: the sweep buries it in its flow, the flow fails, its dependents never run', async () => {
    const prefix = uniquePrefix('flow-crash-dead');
    const { leaf: once, mid, top } = await rolesOn(redis, prefix, 'fd');
    const types = JSON.stringify([{ type: once, maxAttempts: 1 }, { type: mid }, { type: top }]);
    const fleet = (rig.fleet = new WorkerFleet(target, prefix, () => ({ DQ_TYPES: types, DQ_VISIBILITY_MS: '3000' })));
    fleet.start(2);
    const producer = (rig.producer = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: { [once]: {}, [mid]: {}, [top]: {} } }));
    const flows = producer.app.get(TaskFlowService);
    const nodes: FlowNode[] = [
      { ref: 'x', type: once, payload: { hold: true } },
      { ref: 'y', type: mid, payload: {}, dependsOn: ['x'] },
      { ref: 'z', type: top, payload: {}, dependsOn: ['y'] },
      { ref: 'w', type: mid, payload: {} },
      { ref: 'v', type: top, payload: {}, dependsOn: ['w'] },
    ];
    const { id } = await flows.submitFlow(nodes);
    const startOfX = await waitFor(async () => (await records(redis, prefix)).starts.find((s) => s.r === 'x'), { timeoutMs: 30_000, message: 'x started' });
    const holder = fleet.live().find((c) => c.pid === startOfX.pid);
    expect(holder).toBeDefined();
    holder!.kill('SIGKILL');
    await holder!.exited;
    const killedAt = Date.now();

    // Lease (3 s) + a sweep (every 5 s) + polls: 20 s is generous.
    const [flow] = await flowsEnded(flows, [id], 20_000);
    expect(flow.state).toBe('failed');
    expect(Date.now() - killedAt).toBeLessThan(20_000);
    expect(nodeOf(flow, 'x').state).toBe('dead');
    expect(nodeOf(flow, 'x').error).toBeDefined();
    expect(['y', 'z'].map((r) => nodeOf(flow, r).state)).toEqual(['blocked', 'blocked']);
    expect(['w', 'v'].map((r) => nodeOf(flow, r).state)).toEqual(['completed', 'completed']);
    expect(flow.counts).toEqual({ total: 5, completed: 2, dead: 1, cancelled: 0, blocked: 2 });
    expect((await producer.inspect.getTask(once, `&${id}:x`)).state).toBe('dead');
    await sleep(1000); // a late start of y or z would show here
    const { starts, ends } = await records(redis, prefix);
    expect(starts.filter((s) => ['x', 'y', 'z'].includes(s.r)).map((s) => s.r)).toEqual(['x']);
    // w may run again when the killed process had run it too (not acked yet): only then.
    const alive = nodes.filter((n) => ['w', 'v'].includes(n.ref));
    expect(violations([{ id, nodes: alive }], starts, ends, afterDeathOf(fleet.deaths))).toEqual([]);
    expect(fleet.unexpected).toEqual([]);
  }, 90_000);
});
