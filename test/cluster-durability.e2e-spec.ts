/**
 * Durability on a Redis Cluster (issue 27, item 1): a durable write is confirmed by a `WAIT` on the master that
 * applied it, which on a cluster is not the master of every other write of the same operation. The move of a
 * due delayed ordered task writes its partition (on the partition's master) and then acks its mover task (on
 * the mover type's master): the ack's `WAIT` confirms nothing of the partition's write, so the move itself must
 * be confirmed before the mover acks; else a failover of the partition's master can lose the task for good
 * (the mover task is done, the partition never had it).
 *
 * Failure matrix (a cluster of this file's own: 3 masters with a replica each; durability { replicas: 1 }):
 * | cell | expected |
 * | (a) delay and ordered tasks under durability, replicas healthy | every task runs once; every completion announced; no durability warning |
 * | (b) the replica of a partition's master stopped (SIGSTOP) while a delayed ordered task of that partition falls due | the task runs (it is on the master), but its move is not acknowledged: the mover task stays unfinished and retries; once the replica is back (SIGCONT) the move is confirmed and the mover done; the task ran once: each retry repeats the move under the same name (failing first: the mover was done at once; then, with moves named after their due time, which a retry changes, the task ran 3 times) |
 * | (c) the replica of a delay type's master stopped | a durable submit rejects with DurabilityError carrying the id written; a submit with durability: false succeeds |
 */
import { Injectable } from '@nestjs/common';
import { DurabilityError, OnTaskEvent, type Task, type TaskEvent } from 'nestjs-distributed-queue';
import { routeDelayType } from 'nestjs-distributed-queue/distributed-queue.constants';
import { delayQueueKeys } from 'nestjs-distributed-queue/redis/queue-keys';
import { partitionOf, routeKeys } from 'nestjs-distributed-queue/route/route-keys';
import { keySlot, masterOf, replicasInSync } from './support/cluster-admin';
import { startQueueApp, workerClass, type QueueApp } from './support/queue-app';
import { redisCommand, startRedisCluster, type RedisClusterHandle, type RedisServerHandle } from './support/redis-server';
import { routeTestOptions } from './support/route';
import { uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

const PARTITIONS = 4;

describe('durability on a cluster', () => {
  let cluster: RedisClusterHandle;
  let app: QueueApp | undefined;
  const runs = new Map<string, number>();
  const completed = new Set<string>();
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicas: 1, nodeTimeoutMs: 5000 });
    await replicasInSync(cluster);
  }, 60_000);
  afterEach(async () => {
    for (const s of cluster.servers) s.kill('SIGCONT');
    await app?.close();
    app = undefined;
    runs.clear();
    completed.clear();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  @Injectable()
  class Completions {
    @OnTaskEvent('cd.d', 'completed')
    delay(event: TaskEvent): void {
      completed.add(event.task.id);
    }
  }

  /** `waitMs`: the WAIT bound (short where a replica is stopped; longer where none is: a loaded machine's replica lags). */
  async function start(prefix: string, waitMs = 300): Promise<QueueApp> {
    const ran = (t: Task) => void runs.set(t.id, (runs.get(t.id) ?? 0) + 1);
    return startQueueApp({
      connection: { cluster: cluster.servers.map((s) => ({ host: '127.0.0.1', port: s.port })) },
      keyPrefix: prefix, route: routeTestOptions(prefix, 'm1', PARTITIONS), durability: { replicas: 1, timeoutMs: waitMs },
      defaults: { backoff: { type: 'fixed', delayMs: 200, jitter: 0 }, maxAttempts: 1000 },
    }, [workerClass('cd.d', { concurrency: 8 }, ran), workerClass('cd.o', { ordered: true }, ran), Completions]);
  }

  const live = (): number => cluster.servers[0].port;
  const masterOfKey = async (key: string): Promise<RedisServerHandle> => masterOf(cluster, await keySlot(live(), key), live());

  /** The replica of `master` (from its INFO replication). */
  async function replicaOf(master: RedisServerHandle): Promise<RedisServerHandle> {
    const info = String(await redisCommand(master.port, ['INFO', 'replication']));
    const port = Number(/slave0:ip=[^,]+,port=(\d+)/.exec(info)?.[1]);
    const replica = cluster.servers.find((s) => s.port === port);
    if (!replica) throw new Error(`no replica of ${master.port}: ${info}`);
    return replica;
  }

  it('(a) delay and ordered tasks under durability: each runs once, every completion announced', async () => {
    const prefix = uniquePrefix('cd-ok');
    // NOTE: 300 ms ran out once in a full suite (both replicas healthy, the machine loaded): a DurabilityError
    app = await start(prefix, 3000);
    const ids = await Promise.all(Array.from({ length: 40 }, (_, i) => app!.submit.submit('cd.d', { i })));
    const ordered = await app.submit.submitOrderedMany('cd.o', Array.from({ length: 40 }, (_, i) => ({ key: `k${i % 8}`, payload: { i }, delay: i % 2 ? 200 : 0 })));
    const all = [...ids, ...ordered.map((r) => r.id)];
    await waitFor(() => all.every((id) => runs.has(id)), { timeoutMs: 20_000, message: 'every task ran' });
    await waitFor(() => ids.every((id) => completed.has(id)), { timeoutMs: 10_000, message: 'every completion announced' });
    expect(all.filter((id) => runs.get(id) !== 1)).toEqual([]);
  }, 60_000);

  it("(b) a partition's replica stopped: the delayed ordered task's move is not acknowledged until the replica confirms it", async () => {
    const prefix = uniquePrefix('cd-move');
    app = await start(prefix);
    const moverMaster = await masterOfKey(delayQueueKeys(prefix, routeDelayType(prefix)).jobs);
    const keys = routeKeys(prefix, prefix);
    let partition = -1;
    for (let p = 0; p < PARTITIONS && partition < 0; p++) {
      if ((await masterOfKey(keys.partition(p).list)).port !== moverMaster.port) partition = p;
    }
    expect(partition).toBeGreaterThanOrEqual(0);
    const key = Array.from({ length: 1000 }, (_, i) => `key-${i}`).find((k) => partitionOf(k, PARTITIONS) === partition)!;
    const replica = await replicaOf(await masterOfKey(keys.partition(partition).list));
    const [submitted] = await app.submit.submitOrderedMany('cd.o', [{ key, payload: {}, delay: 500 }]);
    replica.kill('SIGSTOP');
    // It runs (the partition's master has it), but the mover may not count the move as done.
    await waitFor(() => runs.has(submitted.id), { timeoutMs: 15_000, message: 'the delayed ordered task ran' });
    await sleep(1500);
    const mover = routeDelayType(prefix);
    expect(await app.inspect.getState(mover, submitted.id)).not.toBe('done');
    replica.kill('SIGCONT');
    await waitFor(async () => (await app!.inspect.getState(mover, submitted.id)) === 'done', { timeoutMs: 20_000, message: 'the move confirmed' });
    await sleep(500);
    expect(runs.get(submitted.id)).toBe(1);
  }, 60_000);

  it("(c) a delay type's replica stopped: a durable submit rejects with DurabilityError, a non-durable one succeeds", async () => {
    const prefix = uniquePrefix('cd-submit');
    app = await start(prefix);
    const replica = await replicaOf(await masterOfKey(delayQueueKeys(prefix, 'cd.d').jobs));
    replica.kill('SIGSTOP');
    const error = await app.submit.submit('cd.d', {}, { id: 'x', delay: 60_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DurabilityError);
    expect(error).toMatchObject({ acknowledged: 0, required: 1, result: 'x' });
    expect(await app.submit.submit('cd.d', {}, { id: 'y', delay: 60_000, durability: false })).toBe('y');
    replica.kill('SIGCONT');
    expect(await app.submit.submit('cd.d', {}, { id: 'x', delay: 60_000 })).toBe('x');
  }, 60_000);
});
