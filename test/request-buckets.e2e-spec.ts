/**
 * The replies kept for repeated calls (issue 27, resharding): every submit, ordered push and re-drive call
 * keeps its reply so that a repeat of it (a command re-sent after a lost reply, service mode's RPC retried,
 * a delayed ordered task's move repeated by another mover) writes nothing twice. They are kept in one HASH
 * per second of request ids (`P:{P:T}:rb:<s>`), not in a key per call: a busy type's slot held a key per
 * submit of the last 60 s (a million at 20,000 submits/s), and a resharding moving that slot paused the
 * type's calls until every one of them had moved.
 *
 * Failure matrix (single server and cluster):
 * | cell                                                              | expected                                                 |
 * | --- | --- |
 * | 3,000 submit calls and 300 push calls in about 2 s                | reply keys: one per second of calls, none per call       |
 * | the same call repeated 1.5 s later (another second: a retried RPC) | the first reply; nothing written twice (submit, push, both re-drives) |
 * | a move's reply (3 leases) and a 60 s reply in one bucket          | the bucket lives for the longer of the two               |
 * | a reply past its time                                             | its bucket expires (a repeat then is a new call)         |
 * | a command re-sent after a lost connection                         | test/resend.e2e-spec.ts, test/route-resend.e2e-spec.ts   |
 * | the type's slot migrated under load                               | test/cluster-failover.e2e-spec.ts (the slot now moves in a few batches) |
 */
import type { Cluster, Redis } from 'ioredis';
import { DelayQueueStore } from 'nestjs-distributed-queue/delay/delay-queue.store';
import { resolveModuleOptions } from 'nestjs-distributed-queue/options/resolve-options';
import { createRedisClient } from 'nestjs-distributed-queue/redis/redis-connection';
import type { RedisClient } from 'nestjs-distributed-queue/redis/script-loader';
import { ensureTopology } from 'nestjs-distributed-queue/route/route-topology';
import { RouteStore } from 'nestjs-distributed-queue/route/route.store';
import { moveRequestId, newRequestId } from 'nestjs-distributed-queue/runtime/request-id';
import { keysUnder } from './support/flow-nodes';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep } from './support/wait';

const item = (id: string) => `{"id":"${id}","type":"ledger","key":"k","payload":{}}`;
const task = (id = '') => ({ id, due: { delay: 0 }, payload: '{}' });

describe.each(getTargets().map((t) => [t.name, t] as const))('request replies on %s', (_name, target) => {
  let client: RedisClient;
  beforeAll(() => {
    client = createRedisClient(target.connection, 'commands', 'request-buckets-test');
  });
  afterAll(() => client.disconnect());
  const redis = (): Redis | Cluster => client as unknown as Redis | Cluster;

  async function routeStore(label: string): Promise<{ store: RouteStore; prefix: string }> {
    const prefix = uniquePrefix(label);
    const store = new RouteStore(client, prefix, resolveModuleOptions({ route: routeTestOptions('q', 'a', 1) }).route!);
    await ensureTopology(store, 1);
    return { store, prefix };
  }

  it('thousands of calls keep their replies in one hash per second, no key per call', async () => {
    const prefix = uniquePrefix('rb-many');
    const store = new DelayQueueStore(client, prefix);
    const route = await routeStore('rb-many-route');
    const started = Date.now();
    for (let round = 0; round < 30; round++) {
      await Promise.all([
        ...Array.from({ length: 100 }, () => store.submit('t', [task()], newRequestId())),
        ...Array.from({ length: 10 }, (_, i) => route.store.push(0, 1, [item(`${round}.${i}`)])),
      ]);
    }
    const seconds = Math.ceil((Date.now() - started) / 1000) + 1;
    const keys = await keysUnder(redis(), prefix);
    const replies = keys.filter((k) => k.includes(':rb:'));
    expect(replies.length).toBeGreaterThan(0);
    expect(replies.length).toBeLessThanOrEqual(seconds);
    // Apart from the replies, the type holds only its own structures: the waiting set (in chunks), jobs, sequence.
    expect(keys.filter((k) => !/:rb:|:wait(:|$)/.test(k)).map((k) => k.slice(k.indexOf('}') + 1))).toEqual([':jobs', ':seq']);
    const routeReplies = (await keysUnder(redis(), route.prefix)).filter((k) => k.includes(':rb:'));
    expect(routeReplies.length).toBeGreaterThan(0);
    expect(routeReplies.length).toBeLessThanOrEqual(seconds);
    expect((await store.counts('t')).ready).toBe(3000);
  }, 60_000);

  it('the same call repeated in a later second (a retried RPC) gets the first reply and writes nothing twice', async () => {
    const prefix = uniquePrefix('rb-repeat');
    const store = new DelayQueueStore(client, prefix);
    const id = newRequestId();
    const first = await store.submit('t', [task(), task('named')], id);
    await sleep(1500);
    expect(await store.submit('t', [task(), task('named')], id)).toEqual(first);
    expect(first.map((r) => r.created)).toEqual([true, true]);
    expect((await store.counts('t')).ready).toBe(2);

    const route = await routeStore('rb-repeat-route');
    const push = newRequestId();
    expect(await route.store.push(0, 1, [item('1'), item('2')], push)).toEqual([{ outcome: 'queued' }, { outcome: 'queued' }]);
    await sleep(1100);
    expect(await route.store.push(0, 1, [item('1'), item('2')], push)).toEqual([{ outcome: 'queued' }, { outcome: 'queued' }]);
    expect((await route.store.partitionState(0)).waiting).toBe(2);
  }, 30_000);

  it('a dead-letter re-drive repeated in a later second moves nothing again', async () => {
    const prefix = uniquePrefix('rb-redrive');
    const store = new DelayQueueStore(client, prefix);
    await store.submit('t', [task('a'), task('b')], newRequestId());
    const take = { count: 2, leaseMs: 10_000, maxAttempts: 1, keepDone: 10, recoverLimit: 10 };
    const { reserved } = await store.take('t', take, [], 'c', 'r1');
    for (const r of reserved) await store.fail('t', r.id, r.token, -1, { name: 'E', message: 'x' });
    expect((await store.counts('t')).dead).toBe(2);
    const id = newRequestId();
    expect(await store.redrive('t', ['a'], 10, id)).toBe(1);
    await sleep(1100);
    expect(await store.redrive('t', ['a', 'b'], 10, id)).toBe(1);
    expect(await store.counts('t')).toMatchObject({ dead: 1, ready: 1 });
  }, 30_000);

  it("a move's reply and a shorter one in the same bucket: the bucket lives for the longer", async () => {
    const { store, prefix } = await routeStore('rb-ttl');
    const dueAt = Math.floor(Date.now() / 1000) * 1000;
    await store.push(0, 1, [item('m')], moveRequestId(dueAt, 'm'), true, 600_000);
    // A call whose id was made in the same second, kept 60 s: it must not cut the move's 10 minutes short.
    await store.push(0, 1, [item('x')], `${dueAt.toString(36)}.other`);
    const [bucket] = (await keysUnder(redis(), prefix)).filter((k) => k.includes(':rb:'));
    expect(Number(await redis().pttl(bucket))).toBeGreaterThan(60_000);
    // The move repeated (another mover, later) appends nothing.
    expect(await store.push(0, 1, [item('m')], moveRequestId(dueAt, 'm'), true, 600_000)).toEqual([{ outcome: 'queued' }]);
    expect((await store.partitionState(0)).waiting).toBe(2);
  });

  it('a reply past its time is gone with its bucket', async () => {
    const { store, prefix } = await routeStore('rb-expiry');
    await store.push(0, 1, [item('1')], newRequestId(), false, 200);
    expect((await keysUnder(redis(), prefix)).filter((k) => k.includes(':rb:'))).toHaveLength(1);
    await sleep(400);
    expect((await keysUnder(redis(), prefix)).filter((k) => k.includes(':rb:'))).toEqual([]);
  });
});
