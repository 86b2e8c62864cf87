/**
 * Pages of ready tasks show the tasks waiting in groups' queues (a defect until 2026-11-29: `getCounts`
 * counted them as ready, `listTaskPage` / `listTasks` / the dashboard's list did not show them), against real
 * Redis (single server and cluster).
 *
 * Failure matrix (each cell a test below):
 * | cell                                               | expected                                                  |
 * |----------------------------------------------------|-----------------------------------------------------------|
 * | ready tasks in the waiting set, the turn queue,    | every one on exactly one page of any size; the order: the |
 * | groups' queues (names to encode) and the '' queue  | waiting set, the turn queue, then the groups by name, by  |
 * |                                                    | turn and submission within a group; offsets agree          |
 * | a group leaves and another enters between pages    | the cursor goes on from its group by name: nothing shown  |
 * |                                                    | twice, every task that stayed is shown                    |
 * | many groups (more than one step of 64 groups)      | 2,000 groups: every task on exactly one page, by name     |
 * | equal turns in one big group (a burst of one ms)   | pages of 7 through 3,000 tasks of one turn: each once,    |
 * |                                                    | by submission (the binary search over equal turns)        |
 * | bad cursors of the new kind                        | InvalidArgumentError, nothing read                        |
 * | the dashboard's list                               | the same pages through the HTTP API                       |
 */
import 'reflect-metadata';
import { InvalidArgumentError, TaskGroupsService, type TaskInfo, type TaskPage } from 'nestjs-distributed-queue';
import { TOKEN, useDashboards } from './support/dashboard';
import { useQueueApps, type QueueApp } from './support/queue-app';
import { reserveOne } from './support/reserve';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';

/** Every page of `state` of `limit` tasks, from the first: the ids in page order. */
async function allPages(app: QueueApp, type: string, state: 'ready' | 'delayed', limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = await app.inspect.listTaskPage(type, state, { cursor, limit });
    ids.push(...page.tasks.map((t: TaskInfo) => t.id));
    if (!page.next) return ids;
    expect(page.tasks).toHaveLength(limit);
    cursor = page.next;
  }
  throw new Error('too many pages');
}

describe.each(getTargets().map((t) => [t.name, t] as const))('pages of ready tasks with groups on %s', (_name, target: RedisTarget) => {
  const { start } = useQueueApps(target);
  const dashboards = useDashboards();

  it("show the tasks of every queue once, at any page size: the waiting set, the turn queue, the groups' queues by name, the '' queue", async () => {
    const prefix = uniquePrefix('grp-list');
    const app = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { gl: {} } });
    const names = ['b/ü', 'a', 'c.d e', '"<x>"'];
    await app.submit.submitMany('gl', [
      ...names.flatMap((group, g) => Array.from({ length: 4 }, (_, i) => ({ id: `g${g}-${i}`, payload: i, group, priority: i % 2 ? 3 : 0 }))),
      { id: 'later', payload: 0, group: 'a', delay: 60_000 },
    ]);
    // a reserve of one moves the due tasks without a group into the '' queue (groups have due tasks)
    await app.submit.submitMany('gl', [{ id: 'n0', payload: 0 }, { id: 'n1', payload: 1 }, { id: 'n2', payload: 2 }]);
    const reserved = await reserveOne(app, 'gl');
    expect(reserved).toHaveLength(1);
    // after it: one due task in the waiting set, two in the turn queue
    await app.submit.submitMany('gl', [{ id: 'w0', payload: 0 }, { id: 't0', payload: 0, priority: 2 }, { id: 't1', payload: 0, priority: 7 }]);
    const counts = await app.inspect.getCounts('gl');
    const every = [...names.flatMap((_, g) => Array.from({ length: 4 }, (_, i) => `g${g}-${i}`)), 'n0', 'n1', 'n2', 'w0', 't0', 't1'].filter((id) => !reserved.includes(id));
    expect(counts).toMatchObject({ ready: every.length, delayed: 1 });

    const one = await allPages(app, 'gl', 'ready', 1000);
    expect([...one].sort()).toEqual([...every].sort());
    // the order: the waiting set, the turn queue (by turn), then the groups by name ('' first), each by turn
    expect(one.slice(0, 3)).toEqual(['w0', 't0', 't1']);
    const groupOf = new Map(names.map((group, g) => [`g${g}`, group]));
    const grouped = one.slice(3).map((id) => (id.startsWith('n') ? '' : groupOf.get(id.split('-')[0])!));
    expect(grouped).toEqual([...grouped].sort((x, y) => (Buffer.compare(Buffer.from(x), Buffer.from(y)))));
    for (const [g] of names.entries()) {
      const inGroup = one.filter((id) => id.startsWith(`g${g}-`));
      expect(inGroup).toEqual([0, 2, 1, 3].map((i) => `g${g}-${i}`).filter((id) => !reserved.includes(id)));
    }
    for (const limit of [1, 2, 3, 5, 7]) expect(await allPages(app, 'gl', 'ready', limit)).toEqual(one);
    expect(await allPages(app, 'gl', 'delayed', 2)).toEqual(['later']);
    // listTasks by offset agrees
    const byOffset: string[] = [];
    for (let offset = 0; offset < every.length; offset += 4) byOffset.push(...(await app.inspect.listTasks('gl', 'ready', { offset, limit: 4 })).map((t) => t.id));
    expect(byOffset).toEqual(one);
    // a task of a group's queue is shown with its group's record: its payload and priority
    const page = await app.inspect.listTaskPage('gl', 'ready', { limit: 1000 });
    expect(page.tasks.find((t) => t.id === 'g1-1')).toMatchObject({ state: 'ready', payload: 1, priority: 3 });
  });

  it('a cursor goes on from its group by name while groups leave and enter: nothing twice, every task that stayed shown', async () => {
    const prefix = uniquePrefix('grp-list-move');
    const app = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { gm: {} } });
    const group = (g: string) => Array.from({ length: 3 }, (_, i) => ({ id: `${g}${i}`, payload: i, group: g }));
    await app.submit.submitMany('gm', [...group('a'), ...group('c'), ...group('e')]);
    const first = await app.inspect.listTaskPage('gm', 'ready', { limit: 4 });
    expect(first.tasks.map((t) => t.id)).toEqual(['a0', 'a1', 'a2', 'c0']);
    // c's next task goes, group a leaves, b (before the cursor) and d (after it) enter
    expect(await app.submit.cancel('gm', 'c1')).toBe('cancelled');
    expect(await app.app.get(TaskGroupsService).drainGroup('gm', 'a')).toBe(3);
    await app.submit.submitMany('gm', [...group('b'), ...group('d')]);
    const rest = await allPagesFrom(app, 'gm', first.next!, 2);
    expect(rest).toEqual(['c2', 'd0', 'd1', 'd2', 'e0', 'e1', 'e2']);
    // and a cursor whose group is gone entirely goes on with the next group by name
    const fromC = await app.inspect.listTaskPage('gm', 'ready', { limit: 4 });
    expect(fromC.tasks.map((t) => t.id)).toEqual(['b0', 'b1', 'b2', 'c0']);
    await app.app.get(TaskGroupsService).drainGroup('gm', 'c');
    expect((await app.inspect.listTaskPage('gm', 'ready', { cursor: fromC.next!, limit: 4 })).tasks.map((t) => t.id)).toEqual(['d0', 'd1', 'd2', 'e0']);
  });

  it('2,000 groups and 3,000 tasks of one turn in one group: every task on exactly one page', async () => {
    const prefix = uniquePrefix('grp-list-many');
    const app = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { gk: {} } });
    const at = Date.now();
    await app.submit.submitMany('gk', Array.from({ length: 3000 }, (_, i) => ({ id: `burst${i}`, payload: 0, group: 'burst', runAt: at })));
    for (let from = 0; from < 2000; from += 500) {
      await app.submit.submitMany('gk', Array.from({ length: 500 }, (_, i) => ({ id: `m${from + i}`, payload: 0, group: `m${String(from + i).padStart(4, '0')}` })));
    }
    expect((await app.inspect.getCounts('gk')).ready).toBe(5000);
    const pages = await allPages(app, 'gk', 'ready', 7);
    expect(pages).toHaveLength(5000);
    expect(new Set(pages).size).toBe(5000);
    // the burst's tasks share a turn: by submission within it
    expect(pages.slice(0, 3000)).toEqual(Array.from({ length: 3000 }, (_, i) => `burst${i}`));
    expect(pages.slice(3000)).toEqual(Array.from({ length: 2000 }, (_, i) => `m${i}`));
  });

  it("the dashboard's list pages through the groups' queues as listTaskPage does", async () => {
    const prefix = uniquePrefix('grp-list-dash');
    const { call, submit } = await dashboards.start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { gd: {} } }, { token: TOKEN }, []);
    await submit.submitMany('gd', ['x/1', 'y 2', 'ü'].flatMap((group) => [0, 1].map((i) => ({ id: `${group}-${i}`, payload: i, group }))));
    const ids: string[] = [];
    let cursor = '';
    for (let pages = 0; pages < 10; pages++) {
      const res = await call(`/api/types/gd/tasks?state=ready&limit=4&cursor=${encodeURIComponent(cursor)}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { tasks: { id: string }[]; next: string | null; total: number };
      expect(page.total).toBe(6);
      ids.push(...page.tasks.map((t) => t.id));
      if (!page.next) break;
      cursor = page.next;
    }
    expect(ids).toEqual(['x/1-0', 'x/1-1', 'y 2-0', 'y 2-1', 'ü-0', 'ü-1']);
  });

  it('bad cursors of the groups kind are InvalidArgumentError', async () => {
    const prefix = uniquePrefix('grp-list-bad');
    const app = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { gb: {} } });
    for (const cursor of ['ready.g1.2', 'ready.g1.2.a/b', 'ready.t1.2.YQ', 'ready.1.2.YQ', `ready.g1.2.${'A'.repeat(1025)}`]) {
      await expect(app.inspect.listTaskPage('gb', 'ready', { cursor })).rejects.toThrow(InvalidArgumentError);
    }
    expect((await app.inspect.listTaskPage('gb', 'ready', { cursor: 'ready.g1.2.YQ' })).tasks).toEqual([]);
  });
});

/** Every page of ready tasks of `limit` from `cursor`: the ids in page order. */
async function allPagesFrom(app: QueueApp, type: string, cursor: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let next: string | null = cursor;
  while (next) {
    const page: TaskPage = await app.inspect.listTaskPage(type, 'ready', { cursor: next, limit });
    ids.push(...page.tasks.map((t: TaskInfo) => t.id));
    next = page.next;
  }
  return ids;
}
