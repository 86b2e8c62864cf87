import type { Task } from 'nestjs-distributed-queue';
import { killAllChildren, spawnChild, type ChildHandle } from './support/child';
import { redisNow, useQueueApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { waitFor } from './support/wait';

interface Report {
  type: 'start' | 'done';
  id: string;
  attempt: number;
  at: number;
}

const starts = (child: ChildHandle): Report[] => child.messages.filter((m: Report) => m.type === 'start');

function workerChild(target: RedisTarget, prefix: string, type: string, env: Record<string, string>): ChildHandle {
  return spawnChild('test/fixtures/worker-app.ts', {
    DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: type, ...env,
  });
}

/** Starts of a worker at concurrency 1, in the order they happened. */
function recorder(type: string) {
  const started: string[] = [];
  const W = workerClass(type, { concurrency: 1, pollIntervalMs: 100 }, (task: Task) => {
    started.push(task.id);
  });
  return { started, W };
}

describe.each(getTargets().map((t) => [t.name, t] as const))('delay queue order on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  afterEach(() => killAllChildren());

  it('runs tasks due at the same time in submission order within one call (generated ids)', async () => {
    const keyPrefix = uniquePrefix('fifo-one');
    const producer = await start({ connection: target.connection, keyPrefix, workers: false, types: { fifo: {} } });
    const submitted = (await producer.submit.submitMany('fifo', Array.from({ length: 500 }, (_, i) => ({ payload: i })))).map((r) => r.id);
    const { started, W } = recorder('fifo');
    await start({ connection: target.connection, keyPrefix }, [W]);
    await waitFor(() => started.length === 500, { timeoutMs: 15_000, message: 'all 500 ran' });
    expect(started).toEqual(submitted);
  });

  it('runs tasks with one runAt in submission order across calls, whatever their ids', async () => {
    const keyPrefix = uniquePrefix('fifo-calls');
    const producer = await start({ connection: target.connection, keyPrefix, workers: false, types: { calls: {} } });
    const runAt = (await redisNow(redis())) + 1500;
    const ids = ['zeta', 'alpha', 'mid', '#0', 'beta', 'z', 'a', '9'].map((id, i) => (id === '#0' ? `k${i}` : id));
    for (const id of ids) await producer.submit.submit('calls', { id }, { id, runAt });
    const generated = await producer.submit.submit('calls', 'gen', { runAt });
    const { started, W } = recorder('calls');
    await start({ connection: target.connection, keyPrefix }, [W]);
    await waitFor(() => started.length === ids.length + 1, { timeoutMs: 10_000 });
    expect(started).toEqual([...ids, generated]);
  });

  it('re-drives dead letters in their submission order', async () => {
    const keyPrefix = uniquePrefix('fifo-redrive');
    let fail = true;
    const started: string[] = [];
    const W = workerClass('rd', { concurrency: 1, maxAttempts: 1, pollIntervalMs: 100 }, (task: Task) => {
      started.push(task.id);
      if (fail) throw new Error('down');
    });
    const app = await start({ connection: target.connection, keyPrefix }, [W]);
    const ids = ['c', 'b', 'a', 'd'];
    await app.submit.submitMany('rd', ids.map((id) => ({ id, payload: id })));
    await waitFor(async () => (await app.inspect.listDead('rd')).total === 4, { timeoutMs: 5000 });
    fail = false;
    started.length = 0;
    expect(await app.inspect.redriveDead('rd', ['a', 'b', 'c', 'd'])).toBe(4);
    await waitFor(() => started.length === 4, { timeoutMs: 5000 });
    expect(started).toEqual(ids);
  });

  it('puts the tasks of a SIGKILLed worker back in their place: they run before a later backlog', async () => {
    const prefix = uniquePrefix('recover-place');
    const producer = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { rp: {} } });
    const held = ['r1', 'r2', 'r3'];
    await producer.submit.submitMany('rp', held.map((id) => ({ id, payload: id })));
    const a = workerChild(target, prefix, 'rp', { DQ_HOLD_MS: '60000', DQ_CONCURRENCY: '3', DQ_VISIBILITY_MS: '1000' });
    await waitFor(() => starts(a).length === 3, { timeoutMs: 20_000 });
    const b = workerChild(target, prefix, 'rp', { DQ_HOLD_MS: '5', DQ_CONCURRENCY: '1', DQ_VISIBILITY_MS: '1000' });
    await b.waitForMessage((m) => m.type === 'ready', 20_000);
    // A backlog that became due after the held tasks: 1,600 tasks of 5 ms, far longer than the lease.
    await producer.submit.submitMany('rp', Array.from({ length: 1600 }, (_, i) => ({ id: `b${i}`, payload: i })));
    a.kill('SIGKILL');
    await a.exited;
    const killedAt = Date.now();
    await waitFor(() => held.every((id) => starts(b).some((m) => m.id === id)), { timeoutMs: 30_000, message: 'recovered tasks ran' });
    const order = starts(b);
    const recovered = held.map((id) => order.find((m) => m.id === id)!);
    // Ready again after the lease (1 s) and then first in line, not behind the whole backlog (8 s and more).
    for (const m of recovered) expect(m.at - killedAt).toBeLessThan(1000 + 1500);
    expect(recovered.map((m) => m.attempt)).toEqual([2, 2, 2]);
    const firstRecovered = order.findIndex((m) => held.includes(m.id));
    expect(order.slice(firstRecovered, firstRecovered + 3).map((m) => m.id)).toEqual(held);
    expect(firstRecovered).toBeLessThan(800);
  });
});
