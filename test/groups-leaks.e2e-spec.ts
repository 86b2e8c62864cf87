/**
 * Groups leave nothing behind (issue 29's bookkeeping): once every task of a type with groups has ended,
 * whatever way it ended, the groups' structures are empty, against real Redis (single server and cluster).
 *
 * Failure matrix (each cell a test below):
 * | cell                                                                   | expected once all ended                    |
 * |------------------------------------------------------------------------|--------------------------------------------|
 * | tasks done, retried then done, dead then re-driven and done, dead then | no group entry (`gof`), no slot (`grun`),  |
 * | deleted, dead then purged, cancelled waiting (delayed and due),        | no backlog (`gb`, `gn`), no group queue,    |
 * | cancelled running, rescheduled, reprioritized, deduplicated; with      | nothing in the rotation or the listing     |
 * | groupConcurrency and a group rate limit                                | index; counts and getGroups empty          |
 */
import 'reflect-metadata';
import { TaskGroupsService, type Task } from 'nestjs-distributed-queue';
import { keysOf, useQueueApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('groups leave nothing behind on %s', (_name, target: RedisTarget) => {
  const { start, redis } = useQueueApps(target);

  it('every way a task ends: the groups structures are empty after', async () => {
    const prefix = uniquePrefix('grp-leak');
    const failing = new Set(['dead-redrive', 'dead-delete', 'dead-purge']);
    const started: string[] = [];
    const W = workerClass('gk', { concurrency: 8, pollIntervalMs: 50, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 50, jitter: 0 }, groupConcurrency: 2, groupRateLimit: { max: 1000, perMs: 1000 } }, async (task: Task, signal: AbortSignal) => {
      started.push(task.id);
      if (task.id === 'retry-once' && task.attempt === 1) throw new Error('once');
      if (failing.has(task.id)) throw new Error('always');
      if (task.id === 'cancel-running') {
        // held until its cancel aborts it
        await new Promise<void>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      }
    });
    const app = await start({ connection: target.connection, keyPrefix: prefix }, [W]);
    const g = (i: number) => `g${i % 3}`;
    await app.submit.submitMany('gk', [
      ...Array.from({ length: 12 }, (_, i) => ({ id: `done-${i}`, payload: i, group: g(i), priority: i % 4 })),
      { id: 'retry-once', payload: 0, group: 'g0' },
      ...[...failing].map((id, i) => ({ id, payload: 0, group: g(i) })),
      { id: 'cancel-running', payload: 0, group: 'g1' },
      { id: 'cancel-delayed', payload: 0, group: 'g2', delay: 60_000 },
      { id: 'reschedule', payload: 0, group: 'g2', delay: 60_000 },
      { id: 'reprioritize', payload: 0, group: 'g0', delay: 60_000, priority: 3 },
      { id: 'dedupe', payload: 1, group: 'g1', delay: 60_000, dedupe: { key: 'd', ttlMs: 60_000, mode: 'replace' } },
    ]);
    await app.submit.submit('gk', 2, { group: 'g1', delay: 60_000, dedupe: { key: 'd', ttlMs: 60_000, mode: 'replace' } });
    await waitFor(() => started.includes('cancel-running'), { message: 'cancel-running started' });
    // a running task's cancel aborts its handler; the task is gone once it stopped
    expect(await app.submit.cancel('gk', 'cancel-running')).toBe('cancel-requested');
    expect(await app.submit.cancel('gk', 'cancel-delayed')).toBe('cancelled');
    expect(await app.submit.reschedule('gk', 'reschedule', { delay: 0 })).toBe(true);
    expect(await app.submit.changePriority('gk', 'reprioritize', 0)).toBe(true);
    expect(await app.submit.reschedule('gk', 'reprioritize', { delay: 0 })).toBe(true);
    expect(await app.submit.reschedule('gk', 'dedupe', { delay: 0 })).toBe(true);
    await waitFor(async () => (await app.inspect.getCounts('gk')).dead === 3, { timeoutMs: 20_000, message: 'three dead' });
    expect((await app.inspect.getTask('gk', 'cancel-running')).state).toBe('unknown');
    failing.delete('dead-redrive');
    expect(await app.inspect.redriveDead('gk', ['dead-redrive'])).toBe(1);
    expect(await app.inspect.deleteDead('gk', ['dead-delete'])).toBe(1);
    await waitFor(async () => {
      const counts = await app.inspect.getCounts('gk');
      return counts.ready === 0 && counts.delayed === 0 && counts.running === 0;
    }, { timeoutMs: 20_000, message: 'everything ended' });
    expect(await app.control.purgeDead('gk')).toBe(1);
    await app.close();

    const w = keysOf(prefix, 'gk').waiting;
    const client = redis();
    expect({
      gof: await client.hgetall(`${w}:gof`),
      grun: await client.hgetall(`${w}:grun`),
      gb: await client.zrange(`${w}:gb`, 0, -1, 'WITHSCORES'),
      gn: Number((await client.get(`${w}:gn`)) ?? 0),
      gr: await client.zrange(`${w}:gr`, 0, -1),
      gq: await client.zrange(`${w}:gq`, 0, -1),
      gx: await client.hgetall(`${w}:gx`),
      queues: await Promise.all(['', 'g0', 'g1', 'g2'].map((name) => client.zcard(`${w}:g:${name.length}:${name}`))),
    }).toEqual({ gof: {}, grun: {}, gb: [], gn: 0, gr: [], gq: [], gx: {}, queues: [0, 0, 0, 0] });
    const admin = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { gk: {} } });
    expect(await admin.inspect.getCounts('gk')).toMatchObject({ delayed: 0, ready: 0, running: 0, dead: 0 });
    expect((await admin.app.get(TaskGroupsService).getGroups('gk')).total).toBe(0);
  });
});
