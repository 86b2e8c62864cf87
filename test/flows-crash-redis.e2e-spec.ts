/**
 * Flows (issue 30) through Redis itself failing, on a redis-server of this file's own (appendonly yes,
 * appendfsync always), with 2 worker processes (test/fixtures/flows-crash-worker.ts) and a producer here.
 * A node running while Redis is gone may run again (its completion could not be recorded: no ack, its lease
 * expires); no other node starts twice, and every flow completes once Redis is back. The rest of the crash
 * matrix: test/flows-crash.e2e-spec.ts.
 *
 * Failure matrix (each cell a test):
 * | capability                | cell                                                                             |
 * |---------------------------|----------------------------------------------------------------------------------|
 * | Redis restarted (AOF)     | redis-server SIGKILLed in the middle of 30 flows, restarted on its AOF after 1 s: |
 * |                           | every flow completes; a node starts again only when its start before was before  |
 * |                           | Redis was back; a submit refused meanwhile is repeated with its id               |
 * | Redis paused (SIGSTOP 4 s)| submitFlow and getFlow called meanwhile reject with RedisUnavailableError within |
 * |                           | 5 s (redisTimeoutMs 1000); after SIGCONT the refused submit repeated with its id,|
 * |                           | every flow completes; a node starts again only when its start before was before  |
 * |                           | SIGCONT                                                                          |
 */
import { randomBytes } from 'crypto';
import { Redis } from 'ioredis';
import { RedisUnavailableError, TaskFlowService, type FlowNode } from 'nestjs-distributed-queue';
import { flowShape, flowsEnded, LATE_MS, records, useCrashRig, violations, WorkerFleet, type Repeat } from './fixtures/flows-crash-support';
import { startQueueApp } from './support/queue-app';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

const ROLES = { leaf: 'fr.leaf', mid: 'fr.mid', top: 'fr.top' };
const TYPES = JSON.stringify(Object.values(ROLES).map((type) => ({ type })));

/** A node may start again only when its start before was before `at()` (Redis back). */
const startedBefore = (at: () => number): Repeat => (prev) => (prev.at < at() ? null : `its start before (pid ${prev.pid}, at ${prev.at}) was after Redis was back (${at()})`);

describe('flows through a Redis restart and a Redis pause', () => {
  let server: RedisServerHandle;
  let redis: Redis | undefined;
  const rig = useCrashRig();
  beforeAll(async () => {
    server = await startRedisServer({ appendonly: true });
  });
  afterEach(async () => {
    server.kill('SIGCONT');
    if (!server.isRunning()) await server.restart();
  });
  afterAll(async () => {
    redis?.disconnect();
    await server.remove();
  });

  /** The fleet and producer on the server; `count` flows submitted one every 100 ms, each repeated with its id until taken. */
  async function run(label: string, count: number, midway: (flows: TaskFlowService, submitted: { id: string; nodes: FlowNode[] }[]) => Promise<void>) {
    const prefix = uniquePrefix(label);
    // NOTE: leases of 6 s (renewed every 2 s): with 3 s a node started 10 ms after SIGCONT ran again 3 s later
    // in a full suite (its lease not renewed nor its ack through in 3 s on a starved machine), which this
    // file's claim does not allow; a node that started before Redis was back still runs again.
    rig.fleet = new WorkerFleet({ connection: server.url }, prefix, () => ({ DQ_TYPES: TYPES, DQ_VISIBILITY_MS: '6000', DQ_REDIS_TIMEOUT_MS: '1000' }));
    rig.fleet.start(2);
    await rig.fleet.ready();
    rig.producer = await startQueueApp({
      connection: server.url, keyPrefix: prefix, workers: false, redisTimeoutMs: 1000, types: Object.fromEntries(Object.values(ROLES).map((t) => [t, {}])),
    });
    const flows = rig.producer.app.get(TaskFlowService);
    const submitted: { id: string; nodes: FlowNode[] }[] = [];
    const submitting = (async () => {
      for (let i = 0; i < count; i++) {
        const flow = { id: randomBytes(8).toString('hex'), nodes: flowShape(i, ROLES, () => Math.floor(Math.random() * 400)) };
        submitted.push(flow);
        for (let tries = 0; ; tries++) {
          const taken = await flows.submitFlow(flow.nodes, { id: flow.id }).then(() => true, (error: unknown) => {
            if (!(error instanceof RedisUnavailableError) || tries >= 100) throw error;
            return false;
          });
          if (taken) break;
          await sleep(200);
        }
        await sleep(100);
      }
    })();
    await waitFor(() => submitted.length >= count / 2, { timeoutMs: 60_000, intervalMs: 20 });
    await midway(flows, submitted);
    await submitting;
    const ended = await flowsEnded(flows, submitted.map((s) => s.id), 60_000);
    await sleep(LATE_MS);
    redis ??= new Redis(server.url);
    return { submitted, ended, ...(await records(redis, prefix)) };
  }

  it('redis-server SIGKILLed in the middle of the flows and restarted on its AOF: every flow completes, only nodes cut by the outage repeat', async () => {
    let killAt = 0;
    let backAt = Infinity;
    const { submitted, ended, starts, ends } = await run('flow-crash-aof', 30, async () => {
      killAt = Date.now();
      server.kill('SIGKILL');
      await sleep(1000);
      await server.restart();
      backAt = Date.now();
    });
    expect(rig.fleet!.unexpected).toEqual([]);
    expect(Number.isFinite(backAt)).toBe(true);
    expect(ended.filter((f) => f.state !== 'completed').map((f) => `${f.id}: ${f.state}`)).toEqual([]);
    expect(violations(submitted, starts, ends, startedBefore(() => backAt))).toEqual([]);
    // Flows ran across the outage: nodes started before it, nodes after it, and nodes ran when Redis died.
    const through = starts.filter((s) => s.at < killAt && !ends.some((e) => e.f === s.f && e.r === s.r && e.at < killAt));
    const seen = { before: starts.filter((s) => s.at < killAt).length > 0, after: starts.filter((s) => s.at > backAt).length > 0, through: through.length > 0 };
    expect({ seen, killAt, backAt }).toEqual({ seen: { before: true, after: true, through: true }, killAt, backAt });
  }, 150_000);

  it('redis-server paused (SIGSTOP) 4 s in the middle of the flows: calls meanwhile fail typed and bounded, then every flow completes', async () => {
    let contAt = Infinity;
    const during: { call: string; error: unknown; ms: number }[] = [];
    const timed = async (call: string, fn: () => Promise<unknown>) => {
      const at = Date.now();
      const error = await fn().then(() => null, (e: unknown) => e);
      during.push({ call, error, ms: Date.now() - at });
    };
    const { submitted, ended, starts, ends } = await run('flow-crash-stop', 30, async (flows, submitted) => {
      const known = submitted[0].id;
      const paused = { id: randomBytes(8).toString('hex'), nodes: flowShape(1, ROLES, () => 0) };
      server.kill('SIGSTOP');
      await sleep(300);
      await Promise.all([
        timed('submitFlow', () => flows.submitFlow(paused.nodes, { id: paused.id })),
        timed('getFlow', () => flows.getFlow(known)),
      ]);
      await sleep(Math.max(0, 4000 - 300 - Math.max(...during.map((d) => d.ms))));
      server.kill('SIGCONT');
      contAt = Date.now();
      // Its outcome was unknown (it may have been applied in part): repeated with its id, it is whole.
      await flows.submitFlow(paused.nodes, { id: paused.id });
      submitted.push(paused);
    });
    expect(rig.fleet!.unexpected).toEqual([]);
    for (const { call, error, ms } of during) {
      expect([call, error instanceof RedisUnavailableError, ms < 5000]).toEqual([call, true, true]);
    }
    expect(ended.filter((f) => f.state !== 'completed').map((f) => `${f.id}: ${f.state}`)).toEqual([]);
    expect(violations(submitted, starts, ends, startedBefore(() => contAt))).toEqual([]);
    expect(starts.some((s) => s.at < contAt - 4000) && starts.some((s) => s.at > contAt)).toBe(true);
  }, 150_000);
});
