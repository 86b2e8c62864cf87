import { InvalidArgumentError, type Task, type TaskInfo } from 'nestjs-distributed-queue';
import { partitionOf } from 'nestjs-distributed-queue/route/route-keys';
import { routeTestOptions } from './support/route';
import { useQueueApps, workerClass, type QueueApp } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

type State = 'ready' | 'running' | 'dead' | 'delayed';

/** Every page of `limit` from offset 0 until an empty page, concatenated. */
async function allPages(app: QueueApp, type: string, state: State, limit: number): Promise<TaskInfo[]> {
  const out: TaskInfo[] = [];
  for (let offset = 0; ; offset += limit) {
    const page = await app.inspect.listTasks(type, state, { offset, limit });
    expect(page.length).toBeLessThanOrEqual(limit);
    if (page.length === 0) return out;
    out.push(...page);
  }
}

describe.each(getTargets().map((t) => [t.name, t] as const))('ordered listings on %s', (_name, target) => {
  const { start } = useQueueApps(target);
  const { connection } = target;

  it('pages the route queue partition by partition: pages make the whole once; each task has its type, key, partition', async () => {
    const app = await start({
      connection, keyPrefix: uniquePrefix('olist'), workers: false,
      types: { oa: { ordered: true }, ob: { ordered: true } }, route: routeTestOptions('q', 'producer', 4),
    });
    const a = await app.submit.submitOrderedMany('oa', Array.from({ length: 30 }, (_, n) => ({ key: `k${n % 10}`, payload: { n } })));
    const b = await app.submit.submitOrderedMany('ob', Array.from({ length: 7 }, (_, n) => ({ key: `k${n}`, payload: { n: 100 + n } })));
    const later = await app.submit.submitOrderedMany('oa', ['x', 'y', 'z'].map((key, i) => ({ key, payload: { key }, delay: 60_000 + i })));
    const types = new Map([...a.map((r) => [r.id, 'oa']), ...b.map((r) => [r.id, 'ob'])] as [string, string][]);

    const all = await app.inspect.listTasks('oa', 'ready', { limit: 1000 });
    expect(all).toHaveLength(37);
    expect(new Set(all.map((t) => t.id))).toEqual(new Set(types.keys()));
    for (const task of all) {
      expect(task.state).toBe('ready');
      expect(task.type).toBe(types.get(task.id));
      expect(task.partition).toBe(partitionOf(task.key!, 4));
    }
    // Partition order, then submission order within a partition (so within each key).
    expect(all.map((t) => t.partition)).toEqual([...all.map((t) => t.partition!)].sort((x, y) => x - y));
    const ns = (key: string, type: string) => all.filter((t) => t.key === key && t.type === type).map((t) => (t.payload as { n: number }).n);
    expect(ns('k3', 'oa')).toEqual([3, 13, 23]);
    for (const limit of [1, 4, 7, 36, 37]) expect((await allPages(app, 'oa', 'ready', limit)).map((t) => t.id)).toEqual(all.map((t) => t.id));
    expect((await app.inspect.listTasks('ob', 'ready', { limit: 1000 })).map((t) => t.id)).toEqual(all.map((t) => t.id));

    const delayed = await allPages(app, 'ob', 'delayed', 2);
    expect(delayed.map((t) => [t.id, t.type, t.key, t.partition, t.payload])).toEqual(
      later.map((r, i) => [r.id, 'oa', 'xyz'[i], partitionOf('xyz'[i], 4), { key: 'xyz'[i] }]),
    );
    expect(delayed.every((t) => t.state === 'delayed' && t.dueAt! > Date.now() + 50_000)).toBe(true);

    expect(await app.inspect.listTasks('oa', 'ready', { offset: 37 })).toEqual([]);
    expect(await app.inspect.listTasks('oa', 'running')).toEqual([]);
    expect(await app.inspect.listTasks('oa', 'done')).toEqual([]);
    for (const [args, name] of [
      [['oa', 'nope' as never], 'state'],
      [['oa', 'ready', { limit: 0 }], 'limit'],
      [['oa', 'ready', { limit: 1001 }], 'limit'],
      [['oa', 'ready', { offset: -1 }], 'offset'],
      [['oa', 'ready', { offset: 1.5 }], 'offset'],
    ] as const) {
      const error = await (app.inspect.listTasks as (...x: unknown[]) => Promise<unknown>)(...args).catch((e: Error) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe(name);
    }
  });

  it('lists running (in flight) and dead ordered tasks with their partition and error', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const W = workerClass('ow', { ordered: true, maxAttempts: 1 }, (task: Task) => {
      if (task.key!.startsWith('hold')) return released;
      if (task.key!.startsWith('bad')) throw new Error(`bad ${task.key}`);
      return undefined;
    });
    const app = await start({ connection, keyPrefix: uniquePrefix('olist-run'), route: routeTestOptions('q', 'm1', 4) }, [W]);
    // NOTE: a partition takes its next batch when the last one ended: the dead ones first, then the holds.
    const bads = await app.submit.submitOrderedMany('ow', ['bad1', 'bad2', 'bad3'].map((key) => ({ key, payload: key })));
    await waitFor(async () => (await app.inspect.getCounts('ow')).dead === 3, { message: '3 dead' });
    const holds = await app.submit.submitOrderedMany('ow', ['hold1', 'hold2'].map((key) => ({ key, payload: key })));
    await waitFor(async () => (await app.inspect.getCounts('ow')).running === 2, { message: '2 running' });
    const running = await app.inspect.listTasks('ow', 'running');
    expect(running.map((t) => [t.id, t.state, t.key, t.partition]).sort()).toEqual(
      holds.map((r, i) => [r.id, 'running', `hold${i + 1}`, partitionOf(`hold${i + 1}`, 4)]).sort(),
    );
    const dead = await allPages(app, 'ow', 'dead', 1);
    expect(dead.map((t) => [t.id, t.key, t.partition, t.lastError?.message]).sort()).toEqual(
      bads.map((r, i) => [r.id, `bad${i + 1}`, partitionOf(`bad${i + 1}`, 4), `bad bad${i + 1}`]).sort(),
    );
    expect(dead.map((t) => t.partition)).toEqual([...dead.map((t) => t.partition!)].sort((x, y) => x - y));
    release();
    await waitFor(async () => (await app.inspect.getCounts('ow')).running === 0, { message: 'holds acked' });
  });
});
