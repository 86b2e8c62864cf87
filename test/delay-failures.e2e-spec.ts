import type { Cluster, Redis } from 'ioredis';
import { TaskCancelledError, TaskTimeoutError, type Task } from 'nestjs-distributed-queue';
import { DelayQueueStore } from 'nestjs-distributed-queue/delay/delay-queue.store';
import { createRedisClient } from 'nestjs-distributed-queue/redis/redis-connection';
import { keysOf, useQueueApps, untilAborted, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('delay queue failures on %s', (_name, target) => {
  const { start, redis: client } = useQueueApps(target);
  let redis: Redis | Cluster;
  beforeEach(() => {
    redis = client();
  });

  it('retries with backoff up to maxAttempts, then dead-letters with the last error; re-drive and delete', async () => {
    const keyPrefix = uniquePrefix('retry');
    const attempts: { attempt: number; at: number }[] = [];
    let succeed = false;
    const W = workerClass('retry', { maxAttempts: 3, backoff: { type: 'exponential', delayMs: 100, jitter: 0 } }, (task: Task) => {
      attempts.push({ attempt: task.attempt, at: Date.now() });
      if (!succeed) throw new Error(`boom ${task.attempt}`);
    });
    const app = await start({ connection: target.connection, keyPrefix }, [W]);
    await app.submit.submit('retry', { a: 1 }, { id: 'r1' });
    await waitFor(async () => (await app.inspect.getState('retry', 'r1')) === 'dead', { timeoutMs: 5000 });
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(attempts[1].at - attempts[0].at).toBeGreaterThanOrEqual(95);
    expect(attempts[2].at - attempts[1].at).toBeGreaterThanOrEqual(195);
    const dead = await app.inspect.listDead('retry');
    expect(dead.total).toBe(1);
    expect(dead.tasks[0]).toMatchObject({ id: 'r1', payload: { a: 1 }, error: { name: 'Error', message: 'boom 3', attempts: 3 } });
    const info = await app.inspect.getTask('retry', 'r1');
    expect(info).toMatchObject({ state: 'dead', attempts: 3, lastError: { message: 'boom 3' } });

    succeed = true;
    expect(await app.inspect.redriveDead('retry', ['r1'])).toBe(1);
    await waitFor(async () => (await app.inspect.getState('retry', 'r1')) === 'done', { timeoutMs: 3000 });
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 1]);
    expect((await app.inspect.listDead('retry')).total).toBe(0);
    expect(await redis.hlen(keysOf(keyPrefix, 'retry').errors)).toBe(0);

    succeed = false;
    await app.submit.submit('retry', {}, { id: 'r2' });
    await waitFor(async () => (await app.inspect.getState('retry', 'r2')) === 'dead', { timeoutMs: 5000 });
    expect(await app.inspect.deleteDead('retry', ['r2'])).toBe(1);
    expect(await app.inspect.getState('retry', 'r2')).toBe('unknown');
    expect(await redis.hlen(keysOf(keyPrefix, 'retry').jobs)).toBe(0);
  });

  it('times a handler out: its signal aborts with TaskTimeoutError and the attempt fails', async () => {
    const keyPrefix = uniquePrefix('timeout');
    const reasons: unknown[] = [];
    const W = workerClass('slow', { timeoutMs: 150, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 10 } }, async (_t, signal) => {
      await untilAborted(signal).catch((reason) => reasons.push(reason));
    });
    const app = await start({ connection: target.connection, keyPrefix }, [W]);
    await app.submit.submit('slow', {}, { id: 't1' });
    await waitFor(async () => (await app.inspect.getState('slow', 't1')) === 'dead', { timeoutMs: 5000 });
    expect(reasons).toHaveLength(2);
    expect(reasons[0]).toBeInstanceOf(TaskTimeoutError);
    expect((await app.inspect.getTask('slow', 't1')).lastError).toMatchObject({ name: 'TaskTimeoutError', attempts: 2 });
  });

  it('times out a handler declared without a signal (no abort controller made): its slot is freed for the next task', async () => {
    const keyPrefix = uniquePrefix('timeout-nosignal');
    const started: string[] = [];
    const W = workerClass('hang', { concurrency: 1, timeoutMs: 150, maxAttempts: 1 }, (task: Task) => {
      started.push(task.id);
      return task.id === 'hangs' ? new Promise(() => undefined) : undefined;
    });
    const app = await start({ connection: target.connection, keyPrefix }, [W]);
    await app.submit.submit('hang', {}, { id: 'hangs' });
    await app.submit.submit('hang', {}, { id: 'next', delay: 20 });
    await waitFor(async () => (await app.inspect.getState('hang', 'next')) === 'done', { timeoutMs: 5000 });
    expect(started).toEqual(['hangs', 'next']);
    expect((await app.inspect.getTask('hang', 'hangs')).lastError).toMatchObject({ name: 'TaskTimeoutError', attempts: 1 });
  });

  it('cancels delayed and ready tasks, and running ones on request (aborted, not retried)', async () => {
    const keyPrefix = uniquePrefix('cancel');
    const started: string[] = [];
    const reasons: unknown[] = [];
    const W = workerClass('cancel', { maxAttempts: 5 }, async (task: Task, signal) => {
      started.push(task.id);
      if (task.id === 'running') await untilAborted(signal).catch((reason) => reasons.push(reason));
    });
    const producer = await start({ connection: target.connection, keyPrefix, workers: false, types: { cancel: {} } });
    await producer.submit.submit('cancel', {}, { id: 'delayed', delay: 300 });
    await producer.submit.submit('cancel', {}, { id: 'ready' });
    expect(await producer.submit.cancel('cancel', 'delayed')).toBe('cancelled');
    expect(await producer.submit.cancel('cancel', 'ready')).toBe('cancelled');
    expect(await producer.submit.cancel('cancel', 'ghost')).toBe('not-found');
    await start({ connection: target.connection, keyPrefix }, [W]);
    await producer.submit.submit('cancel', {}, { id: 'running' });
    await waitFor(() => started.includes('running'), { timeoutMs: 3000 });
    expect(await producer.submit.cancel('cancel', 'running')).toBe('cancel-requested');
    await waitFor(() => reasons.length === 1, { timeoutMs: 3000, message: 'running handler aborted' });
    expect(reasons[0]).toBeInstanceOf(TaskCancelledError);
    await waitFor(async () => (await producer.inspect.getState('cancel', 'running')) === 'unknown', { timeoutMs: 3000 });
    await sleep(500);
    expect(started).toEqual(['running']);
    const keys = keysOf(keyPrefix, 'cancel');
    expect(await redis.hlen(keys.jobs)).toBe(0);
    expect(await redis.zcard(keys.dead)).toBe(0);
  });

  it('reschedules a waiting task and refuses a running one', async () => {
    const keyPrefix = uniquePrefix('resched');
    const ran: number[] = [];
    const W = workerClass('resched', { pollIntervalMs: 60_000 }, (task: Task) => {
      ran.push(Date.now() - task.dueAt);
    });
    const app = await start({ connection: target.connection, keyPrefix }, [W]);
    await app.submit.submit('resched', {}, { id: 'x', delay: 30_000 });
    await sleep(50);
    expect(await app.submit.reschedule('resched', 'x', { delay: 200 })).toBe(true);
    await waitFor(() => ran.length === 1, { timeoutMs: 3000 });
    expect(ran[0]).toBeGreaterThanOrEqual(0);
    expect(await app.submit.reschedule('resched', 'x', { delay: 10 })).toBe(false);
  });

  it('dead-letters corrupt records with the reason and keeps working', async () => {
    const keyPrefix = uniquePrefix('corrupt');
    const keys = keysOf(keyPrefix, 'corrupt');
    const ran: string[] = [];
    const W = workerClass('corrupt', {}, (task: Task) => {
      ran.push(task.id);
    });
    const app = await start({ connection: target.connection, keyPrefix }, [W]);
    await redis.hset(keys.jobs, 'bad-header', '~garbage');
    await redis.hset(keys.jobs, 'bad-json', 'A2{not json');
    // waiting members are `<seq tag><id>` (tag: 'A' + digit count, then hex digits); written as earlier
    // versions kept them (one sorted set), which the first take moves into the chunks
    await redis.zadd(keys.legacyWaiting, 0, 'A1bad-header', 0, 'A2bad-json', 0, 'A3missing', 0, 'no-tag');
    await app.submit.submit('corrupt', { ok: true }, { id: 'good' });
    await waitFor(() => ran.includes('good'), { timeoutMs: 3000 });
    await waitFor(async () => (await app.inspect.listDead('corrupt')).total === 4, { timeoutMs: 3000 });
    const dead = await app.inspect.listDead('corrupt');
    const byId = Object.fromEntries(dead.tasks.map((t) => [t.id, t]));
    expect(byId['bad-header'].error).toMatchObject({ name: 'CorruptTaskError', message: expect.stringContaining('unreadable') });
    expect(byId['bad-header'].raw).toBe('~garbage');
    expect(byId['missing'].error.message).toContain('missing');
    expect(byId['no-tag'].error.message).toContain('missing');
    expect(byId['bad-json'].error).toMatchObject({ name: 'CorruptTaskError', message: expect.stringContaining('JSON') });
    expect(ran).toEqual(['good']);
  });

  it('refuses an ack, extend or failure from a reservation that expired (stale token)', async () => {
    const keyPrefix = uniquePrefix('stale');
    const client = createRedisClient(target.connection, 'commands', 'stale-test');
    try {
      const store = new DelayQueueStore(client, keyPrefix);
      const take = { count: 1, leaseMs: 100, maxAttempts: 5, keepDone: 10, recoverLimit: 10 };
      await store.submit('stale', [{ id: 's', due: { delay: 0 }, payload: '{}' }], 'sub-1');
      const first = await store.take('stale', take, [], 'c', 'r1');
      expect(first.reserved.map((r) => [r.id, r.attempt])).toEqual([['s', 1]]);
      await sleep(150);
      const second = await store.take('stale', take, [], 'c', 'r2');
      expect(second.reserved.map((r) => [r.id, r.attempt])).toEqual([['s', 2]]);
      const oldToken = first.reserved[0].token;
      expect(await store.extend('stale', 10_000, [['s', oldToken]])).toEqual(['s']);
      expect(await store.fail('stale', 's', oldToken, 0, { name: 'E', message: 'x' })).toBe('stale');
      const refused = await store.take('stale', { ...take, count: 0 }, [['s', oldToken]], 'c', '');
      expect(refused.refused).toEqual(['s']);
      expect((await store.get('stale', 's')).state).toBe('running');
      const accepted = await store.take('stale', { ...take, count: 0 }, [['s', second.reserved[0].token]], 'c', '');
      expect(accepted.refused).toEqual([]);
      expect((await store.get('stale', 's')).state).toBe('done');
    } finally {
      client.disconnect();
    }
  });
});
