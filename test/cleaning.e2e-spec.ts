import {
  InvalidArgumentError, InvalidTaskTypeError, QueueInUseError, UnknownTaskTypeError, type Task,
} from 'nestjs-distributed-queue';
import { TaskGroupsService } from 'nestjs-distributed-queue';
import { routeTestOptions } from './support/route';
import { keysOf, keysOfType, useQueueApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

const EMPTY = { delayed: 0, ready: 0, running: 0, dead: 0, done: 0 };

/** A handler that holds every task whose id or key starts with `hold` until `release()`. */
function holder() {
  const started: string[] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const handle = (task: Task) => {
    started.push(task.id);
    if (task.id.startsWith('hold') || task.key?.startsWith('hold')) return released;
    if (task.id.startsWith('bad') || task.key?.startsWith('bad')) throw new Error(`bad ${task.id}`);
    return undefined;
  };
  return { started, release: () => release(), handle };
}

describe.each(getTargets().map((t) => [t.name, t] as const))('cleaning on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  const { connection } = target;

  it('drain removes the waiting tasks and their records, never a running one, which finishes and is acked', async () => {
    const keyPrefix = uniquePrefix('drain');
    const h = holder();
    const app = await start({ connection, keyPrefix }, [workerClass('dr', { concurrency: 1, pollIntervalMs: 100 }, h.handle)]);
    await app.submit.submit('dr', 'x', { id: 'hold' });
    await waitFor(() => h.started.includes('hold'), { message: 'hold running' });
    await app.submit.submitMany('dr', Array.from({ length: 10 }, (_, i) => ({ id: `r${i}`, payload: i })));
    await app.submit.submitMany('dr', Array.from({ length: 5 }, (_, i) => ({ id: `d${i}`, payload: i, delay: 60_000 })));
    expect(await app.control.drain('dr')).toBe(15);
    expect(await app.inspect.getCounts('dr')).toEqual({ ...EMPTY, running: 1 });
    expect(await app.inspect.getState('dr', 'r3')).toBe('unknown');
    expect(await redis().hlen(keysOf(keyPrefix, 'dr').jobs)).toBe(1);
    expect(await app.control.drain('dr')).toBe(0);
    h.release();
    await waitFor(async () => (await app.inspect.getState('dr', 'hold')) === 'done', { message: 'hold acked' });
    expect(await app.inspect.getCounts('dr')).toEqual({ ...EMPTY, done: 1 });
    expect(h.started).toEqual(['hold']);
  });

  it('drains 25,000 waiting tasks in batches', async () => {
    const keyPrefix = uniquePrefix('drain-big');
    const app = await start({ connection, keyPrefix, workers: false, types: { big: {}, kept: {} } });
    const n = 25_000;
    await app.submit.submitMany('big', Array.from({ length: n }, (_, i) => ({ payload: i, delay: i % 2 ? 60_000 : 0 })));
    await app.submit.submitMany('kept', [{ payload: 1 }, { payload: 2 }]);
    expect(await app.inspect.getCounts('big')).toEqual({ ...EMPTY, delayed: n / 2, ready: n / 2 });
    expect(await app.control.drain('big')).toBe(n);
    expect(await app.inspect.getCounts('big')).toEqual(EMPTY);
    expect(await redis().exists(keysOf(keyPrefix, 'big').jobs)).toBe(0);
    expect(await app.inspect.getCounts('kept')).toEqual({ ...EMPTY, ready: 2 });
  });

  it('purgeDead deletes only the dead letters old enough, of both engines', async () => {
    const keyPrefix = uniquePrefix('purge');
    const h = holder();
    const W = workerClass('pd', { maxAttempts: 1, pollIntervalMs: 100 }, h.handle);
    const O = workerClass('opd', { ordered: true, maxAttempts: 1 }, h.handle);
    const app = await start({ connection, keyPrefix, route: routeTestOptions('q', 'm1', 2) }, [W, O]);
    await app.submit.submitMany('pd', ['bad1', 'bad2', 'bad3'].map((id) => ({ id, payload: id })));
    await app.submit.submitOrderedMany('opd', ['bad-a', 'bad-b'].map((key) => ({ key, payload: key })));
    await waitFor(async () => (await app.inspect.getCounts('pd')).dead === 3 && (await app.inspect.getCounts('opd')).dead === 2, {
      message: 'first dead letters',
    });
    await sleep(1500);
    await app.submit.submitMany('pd', ['bad4', 'bad5'].map((id) => ({ id, payload: id })));
    await app.submit.submitOrdered('opd', 'bad-c', 'bad-c');
    await waitFor(async () => (await app.inspect.getCounts('pd')).dead === 5 && (await app.inspect.getCounts('opd')).dead === 3, {
      message: 'young dead letters',
    });
    expect(await app.control.purgeDead('pd', { olderThanMs: 1000 })).toBe(3);
    expect((await app.inspect.listDead('pd')).tasks.map((t) => t.id)).toEqual(['bad4', 'bad5']);
    expect(await app.control.purgeDead('opd', { olderThanMs: 1000 })).toBe(2);
    expect((await app.inspect.listOrderedDead()).map((t) => t.key)).toEqual(['bad-c']);
    expect(await app.control.purgeDead('pd')).toBe(2);
    expect(await app.inspect.getCounts('pd')).toEqual(EMPTY);
    expect(await redis().hlen(keysOf(keyPrefix, 'pd').jobs)).toBe(0);
    await expect(app.control.purgeDead('pd', { olderThanMs: -1 })).rejects.toThrow(InvalidArgumentError);
  });

  it('obliterate is refused while a consumer is live, works with force and once it stopped; other types stay', async () => {
    const keyPrefix = uniquePrefix('oblit');
    const worker = await start({ connection, keyPrefix, types: { other: {} } }, [workerClass('ob', { pollIntervalMs: 100 }, () => undefined)]);
    const admin = await start({ connection, keyPrefix, workers: false, types: { ob: {}, other: {} } });
    const k = keysOf(keyPrefix, 'ob');
    await waitFor(async () => (await redis().zcard(k.consumers)) === 1, { message: 'consumer present' });
    await admin.submit.submitMany('ob', Array.from({ length: 5 }, (_, i) => ({ payload: i, delay: 60_000 })));
    await admin.submit.submitMany('other', [{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    await admin.control.pause('ob');
    const refused = await admin.control.obliterate('ob').catch((e: Error) => e);
    expect(refused).toBeInstanceOf(QueueInUseError);
    expect((refused as QueueInUseError).live).toBe(1);
    expect((await admin.inspect.getCounts('ob')).delayed).toBe(5);

    await admin.control.obliterate('ob', { force: true });
    expect(await admin.inspect.getCounts('ob')).toEqual(EMPTY);
    expect(await admin.control.isPaused('ob')).toBe(false);
    const gone = [k.waiting, k.waitingCount, k.waitingChunk('A0'), k.active, k.jobs, k.running, k.seq, k.dead, k.errors, k.done, k.paused, k.log];
    expect(await Promise.all(gone.map((key) => redis().exists(key)))).toEqual(gone.map(() => 0));

    await worker.close();
    expect(await redis().zcard(k.consumers)).toBe(0);
    await admin.submit.submit('ob', 'again', { delay: 60_000 });
    await admin.control.obliterate('ob');
    expect(await admin.inspect.getCounts('ob')).toEqual(EMPTY);
    expect(await admin.inspect.getCounts('other')).toEqual({ ...EMPTY, ready: 3 });
  });

  it('obliterate deletes every key of the type: groups and their queues, priorities, group settings, rates; the limits the options configure stay', async () => {
    const keyPrefix = uniquePrefix('oblit-all');
    const h = holder();
    const options = { concurrency: 3, pollIntervalMs: 100, groupConcurrency: 1, groupRateLimit: { max: 1000, perMs: 1000 }, rateLimit: { max: 1000, perMs: 1000 } };
    const worker = await start({ connection, keyPrefix }, [workerClass('oa', options, h.handle)]);
    await worker.app.get(TaskGroupsService).setGroupWeight('oa', 'g2', 3);
    await worker.app.get(TaskGroupsService).setGroupConcurrency('oa', 'g3', 2);
    await worker.submit.submitMany('oa', [
      ...Array.from({ length: 5 }, (_, i) => ({ id: `hold-g1-${i}`, payload: i, group: 'g1', priority: i })),
      ...Array.from({ length: 5 }, (_, i) => ({ id: `hold-g2-${i}`, payload: i, group: 'g2' })),
      ...Array.from({ length: 3 }, (_, i) => ({ id: `hold-n${i}`, payload: i, priority: 2 })),
      ...Array.from({ length: 3 }, (_, i) => ({ id: `d${i}`, payload: i, group: 'g3', delay: 60_000, priority: 1 })),
      { id: 'dd', payload: 'x', delay: 60_000, dedupe: { key: 'once', ttlMs: 60_000 } },
    ]);
    // three run (one per group, one without), the other due ones wait in their groups' queues
    await waitFor(() => h.started.length >= 3, { message: 'three running' });
    await worker.control.pause('oa');
    h.release();
    await waitFor(async () => (await worker.inspect.getCounts('oa')).running === 0, { message: 'the three acked' });
    await worker.close();
    const admin = await start({ connection, keyPrefix, workers: false, types: { oa: {} } });
    expect((await admin.inspect.getCounts('oa')).ready).toBeGreaterThan(0);
    await admin.control.obliterate('oa');
    // NOTE: the request keys (a lane per consumer, a bucket per second) expire on their own
    // and the limits the workers' options configure (a live worker of a forced obliterate keeps its limits)
    const left = await keysOfType(redis(), keyPrefix, 'oa');
    const limits = keysOf(keyPrefix, 'oa').limits;
    expect(left.filter((key) => !/:r[qb]:[^:]+$/.test(key) && key !== limits)).toEqual([]);
    for (const key of left.filter((key) => key !== limits)) expect(await redis().pttl(key)).toBeGreaterThan(0);
    expect(Object.keys(await redis().hgetall(limits)).sort()).toEqual(['gcc', 'grl', 'rl']);
    expect(await admin.inspect.getCounts('oa')).toEqual(EMPTY);
  });

  it('an ordered type cleans its route queue: drain keeps the running task, obliterate waits for the machines', async () => {
    const keyPrefix = uniquePrefix('oclean');
    const h = holder();
    const route = routeTestOptions('q', 'm1', 4);
    const machine = await start({ connection, keyPrefix, route, types: { other: {} } }, [workerClass('oc', { ordered: true }, h.handle)]);
    await machine.submit.submitOrdered('oc', 'hold', 'h');
    await waitFor(() => h.started.length === 1, { message: 'hold running' });
    await machine.control.pause('oc');
    await machine.submit.submitOrderedMany('oc', Array.from({ length: 12 }, (_, i) => ({ key: `k${i % 5}`, payload: i })));
    await machine.submit.submitOrderedMany('oc', [{ key: 'k1', payload: 'later', delay: 60_000 }, { key: 'k2', payload: 'later', delay: 60_000 }]);
    await machine.submit.submit('other', 'kept');
    expect(await machine.inspect.getCounts('oc')).toMatchObject({ delayed: 2, ready: 12, running: 1 });
    expect(await machine.control.drain('oc')).toBe(14);
    expect(await machine.inspect.getCounts('oc')).toMatchObject({ delayed: 0, ready: 0, running: 1 });
    h.release();
    await waitFor(async () => (await machine.inspect.getCounts('oc')).running === 0, { message: 'hold acked' });
    expect(h.started).toHaveLength(1);

    await machine.submit.submitOrderedMany('oc', [{ key: 'k1', payload: 1 }, { key: 'k2', payload: 2, delay: 60_000 }]);
    await expect(machine.control.obliterate('oc')).rejects.toThrow(QueueInUseError);
    await machine.control.obliterate('oc', { force: true });
    expect(await machine.inspect.getCounts('oc')).toMatchObject({ delayed: 0, ready: 0, running: 0, dead: 0 });
    expect(await machine.control.isPaused('oc')).toBe(false);
    await machine.close();

    const admin = await start({ connection, keyPrefix, workers: false, route: routeTestOptions('q', 'admin', 4), types: { oc: { ordered: true }, other: {} } });
    await admin.submit.submitOrdered('oc', 'k3', 3);
    await admin.control.obliterate('oc');
    expect(await admin.inspect.getCounts('oc')).toMatchObject({ delayed: 0, ready: 0, running: 0, dead: 0 });
    expect(await admin.inspect.getCounts('other')).toMatchObject({ ready: 1 });
  });

  it('rejects bad input with typed errors, never synchronously', async () => {
    const app = await start({ connection, keyPrefix: uniquePrefix('clean-bad'), workers: false, types: { t: {} } });
    await expect(app.control.drain('nope')).rejects.toThrow(UnknownTaskTypeError);
    await expect(app.control.obliterate('bad{type')).rejects.toThrow(InvalidTaskTypeError);
    await expect(app.control.purgeDead('t', { olderThanMs: Number.NaN })).rejects.toThrow(InvalidArgumentError);
    await expect(app.control.obliterate('t', { force: 'yes' as never })).rejects.toThrow(InvalidArgumentError);
    await expect(app.control.drain('t')).resolves.toBe(0);
  });
});
