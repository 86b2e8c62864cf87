/**
 * Flows (issue 30) through crashes of the worker processes and of Redis: a node never starts twice because of
 * a crash between a dependency's completion and its dependents' release or ack, and no node is forgotten.
 * A worker settles a node in its flow (FlowStore.settle), tells its dependents (FlowStore.release), carries
 * the cascade, then acks; a crash before the ack runs that node again when its lease expires (at least once,
 * as any task) and its repeat tells the dependents again, which must change nothing. Checked on what every
 * handler start recorded in Redis (test/fixtures/flows-crash-worker.ts): a node starts again only after the
 * process of its start before died; a dependent starts after each dependency ended and reads its result;
 * every flow ends 'completed' (getFlow from this process).
 *
 * Failure matrix of the flows' crash and server cells (each a test; this file: the SIGKILL cells):
 * | capability                     | cell                                                                   | file                   |
 * |--------------------------------|------------------------------------------------------------------------|------------------------|
 * | crash in the aimed windows     | 2 worker processes, restarted when they die, SIGKILL themselves after a | here (single, cluster) |
 * |                                | handler returned / settle resolved / release resolved, 12 deaths over   |                        |
 * |                                | 40 flows (a parent and 5 children, a diamond): claim holds, all complete|                        |
 * | random SIGKILLs under load     | 2 worker processes SIGKILLed by the test every 0.4-1.2 s, 10 times      | here (single, cluster) |
 * | nodes on different masters     | the cells above on the cluster: leaf, middle and top types on three     | here (cluster)         |
 * |                                | masters (the flows' records spread over them)                           |                        |
 * | ordered nodes (route queue)    | the aimed and random cells with ordered roots and dependents, and a     | flows-crash-ordered    |
 * |                                | SIGKILL after a due ordered node was pushed into its partition (before  | (DEFECT: a node starts |
 * |                                | the ack of the route delay type's mover task)                           | twice, kept failing)   |
 * | a dependency dies (last attempt| 2 replicas of every type; the worker running a maxAttempts-1 node       | flows-crash-dead       |
 * | lost with its lease)           | SIGKILLed: the dead-letter sweep records it, the flow ends 'failed'    |                        |
 * |                                | within ~15 s, its dependents never run                                  |                        |
 * | Redis restarted (AOF always)   | SIGKILL of redis-server in the middle of flows, restarted: all complete, | flows-crash-redis      |
 * |                                | a node repeats only if it ran across the outage                         |                        |
 * | Redis paused (SIGSTOP)         | submitFlow / getFlow meanwhile settle with RedisUnavailableError within | flows-crash-redis      |
 * |                                | a bound; after SIGCONT (a failed submit repeated with its id) all complete|                      |
 */
import { TaskFlowService } from 'nestjs-distributed-queue';
import { aimedDeaths, expectClaim, flowShape, POINTS, randomKills, repeated, rolesOn, runFlows, useCrashRig, WorkerFleet } from './fixtures/flows-crash-support';
import { connect, startQueueApp } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';

describe.each(getTargets().map((t) => [t.name, t] as const))('flows through worker crashes on %s', (name, target: RedisTarget) => {
  const flowCount = name === 'cluster' ? 24 : 40;
  const rig = useCrashRig();
  const redis = connect(target);
  afterAll(() => redis.disconnect());

  /** Starts 2 worker processes of the 3 types and a producer here; submits `flowCount` flows, one every 150 ms. */
  async function run(label: string, env: (slot: number, generation: number) => Record<string, string>, whileSubmitting?: () => Promise<void>) {
    const prefix = uniquePrefix(label);
    const roles = await rolesOn(redis, prefix, 'fc');
    const types = JSON.stringify(Object.values(roles).map((type) => ({ type, concurrency: 4 })));
    const fleet = (rig.fleet = new WorkerFleet(target, prefix, (slot, generation) => ({ DQ_TYPES: types, DQ_VISIBILITY_MS: '3000', ...env(slot, generation) })));
    fleet.start(2);
    const producer = (rig.producer = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: Object.fromEntries(Object.values(roles).map((t) => [t, {}])) }));
    const flows = producer.app.get(TaskFlowService);
    const shape = (i: number) => flowShape(i, roles, () => Math.floor(Math.random() * 40));
    return { fleet, ...(await runFlows(flows, redis, prefix, flowCount, shape, 150, whileSubmitting)) };
  }

  it('SIGKILL after a handler returned, after settle, after release (12 deaths): no node repeats but the cut ones, every flow completes', async () => {
    const result = await run('flow-crash-aim', aimedDeaths(6));
    for (const point of POINTS) expect([point, result.fleet.diedAt(point) > 0]).toEqual([point, true]);
    expectClaim(result);
    // The windows were hit: nodes cut before their ack ran again.
    expect(repeated(result.starts).length).toBeGreaterThan(0);
  }, 180_000);

  it('random SIGKILLs of the worker processes under load (10): no node repeats but the cut ones, every flow completes', async () => {
    const result = await run('flow-crash-rand', () => ({}), () => randomKills(() => rig.fleet!, 10, 400, 800));
    expect(result.fleet.deaths.size).toBeGreaterThanOrEqual(10);
    expectClaim(result);
  }, 180_000);
});
