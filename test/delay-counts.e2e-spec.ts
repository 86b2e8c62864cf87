import { InvalidArgumentError, type Task } from 'nestjs-distributed-queue';
import { routeTestOptions } from './support/route';
import { useQueueApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('counts and listings on %s', (_name, target) => {
  const { start } = useQueueApps(target);

  it('counts a type by state and lists each state page by page', async () => {
    const keyPrefix = uniquePrefix('counts');
    const release: (() => void)[] = [];
    const W = workerClass('cnt', { concurrency: 4, maxAttempts: 1, pollIntervalMs: 100 }, (task: Task) => {
      if (task.id.startsWith('hold')) return new Promise<void>((resolve) => release.push(resolve));
      if (task.id.startsWith('bad')) throw new Error(`bad ${task.id}`);
      return undefined;
    });
    const app = await start({ connection: target.connection, keyPrefix }, [W]);
    await app.submit.submitMany('cnt', ['later1', 'later2', 'later3'].map((id, i) => ({ id, payload: i, delay: 60_000 + i })));
    await app.submit.submitMany('cnt', ['hold1', 'hold2', 'bad1', 'bad2', 'ok1', 'ok2', 'ok3'].map((id) => ({ id, payload: id })));
    await waitFor(async () => {
      const c = await app.inspect.getCounts('cnt');
      return c.running === 2 && c.dead === 2 && c.done === 3;
    }, { timeoutMs: 10_000, message: '2 running, 2 dead, 3 done' });
    expect(await app.inspect.getCounts('cnt')).toEqual({ delayed: 3, ready: 0, running: 2, dead: 2, done: 3 });

    const delayed = await app.inspect.listTasks('cnt', 'delayed', { offset: 1, limit: 5 });
    expect(delayed.map((t) => [t.id, t.state, t.payload, t.attempts])).toEqual([['later2', 'delayed', 1, 0], ['later3', 'delayed', 2, 0]]);
    const running = await app.inspect.listTasks('cnt', 'running');
    expect(running.map((t) => [t.id, t.attempts]).sort()).toEqual([['hold1', 1], ['hold2', 1]]);
    const dead = await app.inspect.listTasks('cnt', 'dead');
    expect(dead.map((t) => [t.id, t.lastError?.message])).toEqual([['bad1', 'bad bad1'], ['bad2', 'bad bad2']]);
    expect((await app.inspect.listTasks('cnt', 'done')).map((t) => t.id).sort()).toEqual(['ok1', 'ok2', 'ok3']);
    expect(await app.inspect.listTasks('cnt', 'delayed', { offset: 3 })).toEqual([]);
    release.forEach((resolve) => resolve());
    await waitFor(async () => (await app.inspect.getCounts('cnt')).running === 0, { timeoutMs: 5000 });
    expect(await app.inspect.getCounts('cnt')).toEqual({ delayed: 3, ready: 0, running: 0, dead: 2, done: 5 });
  });

  it('lists ready tasks in submission order; bad arguments get a typed error naming them', async () => {
    const keyPrefix = uniquePrefix('listing');
    const app = await start({ connection: target.connection, keyPrefix, workers: false, types: { rdy: {} } });
    const ids = (await app.submit.submitMany('rdy', Array.from({ length: 7 }, (_, i) => ({ payload: i })))).map((r) => r.id);
    await app.submit.submit('rdy', 'x', { id: 'soon', delay: 60_000 });
    expect(await app.inspect.getCounts('rdy')).toEqual({ delayed: 1, ready: 7, running: 0, dead: 0, done: 0 });
    const page = await app.inspect.listTasks('rdy', 'ready', { offset: 2, limit: 3 });
    expect(page.map((t) => t.id)).toEqual(ids.slice(2, 5));
    expect(page.map((t) => t.payload)).toEqual([2, 3, 4]);
    for (const [args, name] of [
      [['rdy', 'nope' as never], 'state'],
      [['rdy', 'ready', { limit: 0 }], 'limit'],
      [['rdy', 'ready', { limit: 1001 }], 'limit'],
      [['rdy', 'ready', { offset: -1 }], 'offset'],
    ] as const) {
      const error = await (app.inspect.listTasks as (...a: unknown[]) => Promise<unknown>)(...args).catch((e: Error) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe(name);
    }
    // listDead pages the same way: bad paging is a typed rejection, never passed on to Redis
    for (const [args, name] of [[['rdy', -1], 'offset'], [['rdy', 0.5], 'offset'], [['rdy', 0, 0], 'limit'], [['rdy', 0, 1001], 'limit']] as const) {
      const error = await (app.inspect.listDead as (...a: unknown[]) => Promise<unknown>)(...args).catch((e: Error) => e);
      expect([name, error]).toEqual([name, expect.any(InvalidArgumentError)]);
      expect((error as InvalidArgumentError).argument).toBe(name);
    }
    expect(await app.inspect.getCounts('unused.type')).toEqual({ delayed: 0, ready: 0, running: 0, dead: 0, done: 0 });
  });

  it('counts an ordered type through its route queue, per partition too', async () => {
    const keyPrefix = uniquePrefix('counts-route');
    const route = routeTestOptions('q', 'producer', 4);
    const app = await start({ connection: target.connection, keyPrefix, workers: false, types: { ord: { ordered: true } }, route });
    await app.submit.submitOrderedMany('ord', ['a', 'b', 'c', 'd', 'a'].map((key, n) => ({ key, payload: n })));
    await app.submit.submitOrdered('ord', 'a', 9, { delay: 60_000 });
    const counts = await app.inspect.getCounts('ord');
    expect(counts).toMatchObject({ delayed: 1, ready: 5, running: 0, dead: 0, done: 0 });
    expect(counts.partitions).toHaveLength(4);
    expect(counts.partitions!.reduce((n, p) => n + p.ready, 0)).toBe(5);
  });
});
