/**
 * Priorities of delay-queue tasks (issue 28, item 1), against real Redis (single server and cluster).
 *
 * Failure matrix (each cell a test below):
 * | capability                         | cell                                                                      |
 * |------------------------------------|---------------------------------------------------------------------------|
 * | order                              | due tasks start by priority (lower first), FIFO within one; plain = 0     |
 * | a delayed task                     | enters its priority when due (its turn counts from its due time)          |
 * | default priority                   | `defaultPriority` of the workers applies to tasks submitted without one   |
 * | aging                              | with agingMs, a task that waited p × agingMs longer goes before level 0   |
 * | changePriority                     | a due task moves at once; a delayed one keeps waiting; not waiting: false |
 * | counts                             | getCounts().priorities per level, back to none when all ran               |
 * | inspection                         | getTask (state, priority, dueAt), cursor pages list turn-queue tasks      |
 * | retry / cancel / reschedule        | a failed attempt keeps its priority; cancel and reschedule in the queue   |
 * | SIGKILL of a worker holding tasks  | recovered tasks keep their priority (another process runs them in order)  |
 * | a delayed task's record            | its short form (a priority mark before its tag: 1 byte up to 26, 3 to 5   |
 * |                                    | above)                                                                    |
 * |                                    | through getTask, pages, reschedule, dedupe's replace and changePriority;  |
 * |                                    | the long form as it falls due (turn queue or group), its due time exact   |
 * | the largest payload                | a 1 MB delayed task of a priority (and one of a group) rewritten as it    |
 * |                                    | falls due: runs with its payload whole                                    |
 * | a flood of due tasks               | 20,000 due prioritized tasks: no reserve call takes more than a few ms    |
 * |                                    | (promotion is bounded per call), and they start in priority order         |
 * | bad input                          | priority, defaultPriority, agingMs: typed errors, nothing written;        |
 * |                                    | ordered types refuse priorities                                           |
 */
import 'reflect-metadata';
import { InvalidOptionsError, InvalidSubmitOptionsError, type Task } from 'nestjs-distributed-queue';
import { killAllChildren, spawnChild } from './support/child';
import { keysOf, startQueueApp, useQueueApps, workerClass } from './support/queue-app';
import { DelayQueueStore } from 'nestjs-distributed-queue/delay/delay-queue.store';
import { reserveOne, TAKE } from './support/reserve';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

interface Start { id: string; attempt: number; at: number }

function recorder(type: string, options: object, onTask?: (t: Task) => unknown): { W: ReturnType<typeof workerClass>; starts: Start[] } {
  const starts: Start[] = [];
  const W = workerClass(type, { concurrency: 1, pollIntervalMs: 100, ...options }, (t: Task) => {
    starts.push({ id: t.id, attempt: t.attempt, at: Date.now() });
    return onTask?.(t);
  });
  return { W, starts };
}

describe.each(getTargets().map((t) => [t.name, t] as const))('priorities on %s', (_name, target: RedisTarget) => {
  const { start, redis } = useQueueApps(target);
  afterEach(() => killAllChildren());

  it('due tasks start by priority, lower first, FIFO within one; no priority is 0', async () => {
    const prefix = uniquePrefix('prio-order');
    const { W, starts } = recorder('po', {});
    const app = await start({ connection: target.connection, keyPrefix: prefix }, [W]);
    await app.control.pause('po');
    const plan = [['a', 5], ['b', 1], ['c', undefined], ['d', 5], ['e', 0], ['f', 1], ['g', 1000], ['h', 5]] as const;
    for (const [id, priority] of plan) await app.submit.submit('po', {}, priority === undefined ? { id } : { id, priority });
    expect((await app.control.getLimits('po')).running).toBe(0);
    await app.control.resume('po');
    await waitFor(() => starts.length === plan.length, { timeoutMs: 10_000 });
    expect(starts.map((s) => s.id)).toEqual(['c', 'e', 'b', 'f', 'a', 'd', 'h', 'g']);
  });

  it('a delayed task enters its priority when due, and counts from its due time', async () => {
    const prefix = uniquePrefix('prio-delayed');
    const { W, starts } = recorder('pd', {});
    const app = await start({ connection: target.connection, keyPrefix: prefix }, [W]);
    await app.control.pause('pd');
    await app.submit.submit('pd', {}, { id: 'late-urgent', priority: 1, delay: 2000 });
    await app.submit.submit('pd', {}, { id: 'now-2', priority: 2 });
    await app.submit.submit('pd', {}, { id: 'now-1', priority: 1 });
    expect((await app.inspect.getTask('pd', 'late-urgent')).state).toBe('delayed');
    await waitFor(async () => (await app.inspect.getTask('pd', 'late-urgent')).state === 'ready', { timeoutMs: 5000 });
    await app.control.resume('pd');
    await waitFor(() => starts.length === 3, { timeoutMs: 10_000 });
    // both of priority 1: the one due first goes first, whatever the submission order
    expect(starts.map((s) => s.id)).toEqual(['now-1', 'late-urgent', 'now-2']);
  });

  it('defaultPriority of the workers applies to tasks submitted without one, in every producer', async () => {
    const prefix = uniquePrefix('prio-default');
    const { W } = recorder('pdef', { defaultPriority: 7 });
    const worker = await start({ connection: target.connection, keyPrefix: prefix }, [W]);
    await worker.control.pause('pdef');
    const producer = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { pdef: {} } });
    await producer.submit.submit('pdef', {}, { id: 'x' });
    await producer.submit.submit('pdef', {}, { id: 'y', priority: 0 });
    expect((await producer.inspect.getTask('pdef', 'x')).priority).toBe(7);
    expect((await producer.inspect.getTask('pdef', 'y')).priority).toBeUndefined();
    expect((await producer.inspect.getCounts('pdef')).priorities).toEqual({ 0: 1, 7: 1 });
  });

  it('aging: a task that waited p x agingMs longer goes before a fresh task of level 0; without aging it never does', async () => {
    for (const agingMs of [100, undefined]) {
      const prefix = uniquePrefix('prio-aging');
      const { W, starts } = recorder('pa', agingMs ? { agingMs } : {});
      const app = await start({ connection: target.connection, keyPrefix: prefix }, [W]);
      await app.control.pause('pa');
      await app.submit.submit('pa', {}, { id: 'old-3', priority: 3 });
      await sleep(450); // 3 x 100 ms and more
      await app.submit.submitMany('pa', [{ id: 'new-0', payload: {} }, { id: 'new-1', payload: {}, priority: 1 }]);
      await app.control.resume('pa');
      await waitFor(() => starts.length === 3, { timeoutMs: 10_000 });
      expect(starts.map((s) => s.id)).toEqual(agingMs ? ['old-3', 'new-0', 'new-1'] : ['new-0', 'new-1', 'old-3']);
    }
  });

  it('changePriority moves a due task at once, a delayed one when due; false when not waiting', async () => {
    const prefix = uniquePrefix('prio-change');
    const app = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { pc: {} } });
    await app.submit.submitMany('pc', [
      { id: 'a', payload: {}, priority: 3 }, { id: 'b', payload: {}, priority: 3 }, { id: 'c', payload: {}, priority: 2 },
      { id: 'd', payload: {} }, { id: 'later', payload: {}, priority: 9, delay: 2000 },
    ]);
    // a reserve takes 'd' and moves the due tasks of a priority it met into their turns
    expect(await reserveOne(app, 'pc')).toEqual(['d']);
    expect(await app.submit.changePriority('pc', 'b', 1)).toBe(true);
    expect(await app.submit.changePriority('pc', 'a', 0)).toBe(true);
    expect(await app.submit.changePriority('pc', 'later', 1)).toBe(true);
    expect(await app.submit.changePriority('pc', 'later', 1)).toBe(true); // unchanged, still waiting
    expect(await app.submit.changePriority('pc', 'nope', 1)).toBe(false);
    expect((await app.inspect.getTask('pc', 'later')).state).toBe('delayed');
    expect((await app.inspect.getCounts('pc')).priorities).toEqual({ 0: 1, 1: 2, 2: 1 });
    // NOTE: a delay the calls above cannot outlast on a loaded machine (300 ms did); then until it is due
    await waitFor(async () => (await app.inspect.getTask('pc', 'later')).state === 'ready', { timeoutMs: 5000 });
    const { W, starts } = recorder('pc', {});
    await start({ connection: target.connection, keyPrefix: prefix }, [W]);
    await waitFor(() => starts.length === 4, { timeoutMs: 5000 });
    expect(starts.map((s) => s.id)).toEqual(['a', 'b', 'later', 'c']);
    expect(await app.submit.changePriority('pc', 'a', 2)).toBe(false); // done
    await waitFor(async () => (await app.inspect.getCounts('pc')).priorities === undefined, { timeoutMs: 3000 });
  });

  it('inspection: getTask and cursor pages show tasks waiting their turn; cancel and reschedule work there', async () => {
    const prefix = uniquePrefix('prio-inspect');
    const app = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { pi: {} } });
    await app.submit.submitMany('pi', [
      ...Array.from({ length: 7 }, (_, i) => ({ id: `p${i}`, payload: { n: i }, priority: 1 + (i % 3) })),
      { id: 'plain', payload: { n: 0 } },
    ]);
    expect(await reserveOne(app, 'pi')).toEqual(['plain']);
    const info = await app.inspect.getTask('pi', 'p1');
    expect(info).toMatchObject({ state: 'ready', priority: 2, payload: { n: 1 }, attempts: 0 });
    expect(typeof info.dueAt).toBe('number');
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await app.inspect.listTaskPage('pi', 'ready', { cursor, limit: 3 });
      seen.push(...page.tasks.map((t) => t.id));
      cursor = page.next ?? undefined;
    } while (cursor);
    // the turn queue, in turn order: priority 1, then 2, then 3, FIFO within each
    expect(seen).toEqual(['p0', 'p3', 'p6', 'p1', 'p4', 'p2', 'p5']);
    expect((await app.inspect.listTasks('pi', 'ready', { offset: 4, limit: 2 })).map((t) => t.id)).toEqual(['p4', 'p2']);
    expect(await app.submit.cancel('pi', 'p3')).toBe('cancelled');
    expect(await app.submit.reschedule('pi', 'p0', { delay: 60_000 })).toBe(true);
    expect((await app.inspect.getTask('pi', 'p0')).state).toBe('delayed');
    expect(await app.inspect.getCounts('pi')).toMatchObject({ ready: 5, delayed: 1, priorities: { 0: 0, 1: 2, 2: 2, 3: 2 } });
    expect(await app.control.drain('pi')).toBe(6);
    expect((await app.inspect.getCounts('pi')).priorities).toBeUndefined();
  });

  it('a delayed task keeps its priority in its short record; it takes the long form as it falls due, its due time exact', async () => {
    const prefix = uniquePrefix('prio-short');
    const app = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { ps: {}, pg: {} } });
    const record = async (type: string, id: string) => (await redis().hget(keysOf(prefix, type).jobs, id))!;
    await app.submit.submitMany('ps', [
      { id: 'plain', payload: { n: 1 }, delay: 1800 },
      { id: 'p7', payload: { n: 1 }, delay: 1500, priority: 7 },
      { id: 'p1000', payload: { n: 1 }, delay: 1500, priority: 1000 },
      { id: 'p30', payload: { n: 1 }, delay: 1500, priority: 30 },
      { id: 'moved', payload: { n: 1 }, delay: 60_000, priority: 9 },
      { id: 'dd', payload: { n: 1 }, delay: 60_000, priority: 4, dedupe: { key: 'k', mode: 'replace' } },
    ] as never);
    // of a group: in its group's queue once due (the one of priority 0 goes first)
    await app.submit.submitMany('pg', [{ id: 'g3', payload: { n: 1 }, delay: 1500, priority: 3, group: 'g' }, { id: 'g0', payload: { n: 1 }, delay: 1500, group: 'g' }]);
    const plain = await record('ps', 'plain');
    expect([(await record('ps', 'p7'))[0], (await record('ps', 'p7')).length - plain.length]).toEqual(['g', 1]);
    expect([(await record('ps', 'p30')).slice(0, 3), (await record('ps', 'p30')).length - plain.length]).toEqual(['P30', 3]);
    expect([(await record('ps', 'p1000')).slice(0, 5), (await record('ps', 'p1000')).length - plain.length]).toEqual(['R1000', 5]);
    expect((await record('pg', 'g3'))[0]).toBe('c');
    const falling = [['ps', 'p7'], ['ps', 'p1000'], ['ps', 'p30'], ['pg', 'g3']] as const;
    const due = new Map(await Promise.all(falling.map(async ([type, id]) => [id, (await app.inspect.getTask(type, id)).dueAt!] as const)));
    expect(await app.inspect.getTask('ps', 'p7')).toMatchObject({ state: 'delayed', priority: 7, payload: { n: 1 }, attempts: 0 });
    expect((await app.inspect.listTaskPage('ps', 'delayed', { limit: 10 })).tasks.map((t) => [t.id, t.priority ?? 0]))
      .toEqual([['p7', 7], ['p1000', 1000], ['p30', 30], ['plain', 0], ['moved', 9], ['dd', 4]]);
    // moved in the waiting set, its payload replaced: still the short form
    expect(await app.submit.reschedule('ps', 'moved', { delay: 30_000 })).toBe(true);
    expect((await app.submit.submitMany('ps', [{ payload: { n: 2 }, delay: 60_000, priority: 4, dedupe: { key: 'k', mode: 'replace' } }] as never))[0]).toMatchObject({ id: 'dd', dedupe: 'replaced' });
    expect([(await record('ps', 'moved'))[0], (await record('ps', 'dd'))[0]]).toEqual(['i', 'd']);
    expect(await app.inspect.getTask('ps', 'dd')).toMatchObject({ state: 'delayed', priority: 4, payload: { n: 2 } });
    expect(await app.submit.changePriority('ps', 'moved', 2)).toBe(true);
    expect(await app.inspect.getTask('ps', 'moved')).toMatchObject({ state: 'delayed', priority: 2 });
    expect((await record('ps', 'moved'))[0]).toBe('b'); // still the short form, with the new mark
    // due: a reserve takes the plain task and moves the others into the turn queue (and the group's queue)
    await waitFor(async () => (await app.inspect.getTask('ps', 'plain')).state === 'ready', { timeoutMs: 5000 });
    expect(await reserveOne(app, 'ps')).toEqual(['plain']);
    expect(await reserveOne(app, 'pg')).toEqual(['g0']);
    for (const [type, id] of falling) {
      expect([id, (await record(type, id))[0]]).toEqual([id, '~']);
      expect([id, await app.inspect.getTask(type, id)]).toMatchObject([id, { state: 'ready', dueAt: due.get(id), payload: { n: 1 } }]);
    }
    expect(await app.inspect.getCounts('ps')).toMatchObject({ ready: 3, delayed: 2, priorities: { 0: 0, 2: 1, 4: 1, 7: 1, 30: 1, 1000: 1 } });
    expect([...await reserveOne(app, 'ps'), ...await reserveOne(app, 'ps'), ...await reserveOne(app, 'ps')]).toEqual(['p7', 'p30', 'p1000']);
    expect(await reserveOne(app, 'pg')).toEqual(['g3']);
    expect(await app.submit.cancel('ps', 'dd')).toBe('cancelled');
    expect(await app.control.drain('ps')).toBe(1);
    expect((await app.inspect.getCounts('ps')).priorities).toBeUndefined();
  });

  it('a delayed 1 MB task of a priority, alone and in a group, is rewritten as it falls due and runs with its payload whole', async () => {
    const prefix = uniquePrefix('prio-1mb');
    const got = new Map<string, string>();
    const W = workerClass('p1mb', { concurrency: 2, pollIntervalMs: 50 }, (task: Task<{ text: string }>) => void got.set(task.id, task.payload.text));
    const app = await start({ connection: target.connection, keyPrefix: prefix }, [W]);
    const text = (c: string) => c.repeat(1024 * 1024 - 16);
    await app.submit.submit('p1mb', { text: text('a') }, { id: 'alone', delay: 300, priority: 7 });
    await app.submit.submit('p1mb', { text: text('b') }, { id: 'grouped', delay: 300, priority: 300, group: 'g' });
    await waitFor(() => got.size === 2, { timeoutMs: 15_000, message: 'both ran' });
    expect(got.get('alone')).toBe(text('a'));
    expect(got.get('grouped')).toBe(text('b'));
  });

  it('a failed attempt keeps its priority, and a SIGKILLed worker\'s tasks come back with theirs', async () => {
    const prefix = uniquePrefix('prio-kill');
    const holder = spawnChild('test/fixtures/worker-app.ts', {
      DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: 'pk', DQ_HOLD_MS: '60000', DQ_CONCURRENCY: '2', DQ_VISIBILITY_MS: '1500',
    });
    await holder.waitForMessage((m: { type: string }) => m.type === 'ready', 30_000);
    const admin = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { pk: {} } });
    await admin.submit.submitMany('pk', [{ id: 'k5', payload: {}, priority: 5 }, { id: 'k4', payload: {}, priority: 4 }]);
    await waitFor(() => holder.messages.filter((m: { type: string }) => m.type === 'start').length === 2, { timeoutMs: 10_000 });
    await admin.submit.submitMany('pk', [{ id: 'w6', payload: {}, priority: 6 }, { id: 'w3', payload: {}, priority: 3 }]);
    holder.kill('SIGKILL');
    await holder.exited;
    let failedOnce = false;
    const { W, starts } = recorder('pk', { visibilityTimeoutMs: 1500, backoff: { type: 'fixed', delayMs: 0 } }, (t) => {
      if (t.id === 'w3' && !failedOnce) {
        failedOnce = true;
        throw new Error('once');
      }
    });
    await start({ connection: target.connection, keyPrefix: prefix }, [W]);
    await waitFor(() => starts.length === 5, { timeoutMs: 15_000 });
    // w3 (priority 3) went first, failed, and went again before w6; the killed worker's k5 and k4 came back
    // when their leases expired, k4 first (submitted after k5, but of priority 4). NOTE: when the leases
    // expire depends on how long this app took to start: before or after w6 (priority 6) both keep these.
    const ids = starts.map((s) => s.id);
    expect(ids.slice(0, 2)).toEqual(['w3', 'w3']);
    expect(ids.indexOf('k4')).toBeLessThan(ids.indexOf('k5'));
    expect(ids.indexOf('w6')).toBeGreaterThan(1);
    if (ids.indexOf('w6') < ids.indexOf('k4')) expect(ids).toEqual(['w3', 'w3', 'w6', 'k4', 'k5']);
    else expect(ids).toEqual(['w3', 'w3', 'k4', 'k5', 'w6']);
    expect(starts[1].attempt).toBe(2);
  }, 60_000);

  it('20,000 prioritized tasks falling due at once: a reserve moves a bounded batch per call, and they start in priority order', async () => {
    const prefix = uniquePrefix('prio-flood');
    const seen: number[] = [];
    const W = workerClass('pf', { concurrency: 50 }, (t: Task<{ p: number }>) => void seen.push(t.payload.p));
    const admin = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { pf: {} } });
    const n = 20_000;
    // delayed a moment, so that they fall due in the waiting set (tasks due at submit go straight into their turns)
    const items = Array.from({ length: n }, (_, i) => ({ payload: { p: 1 + ((i * 7) % 10) }, priority: 1 + ((i * 7) % 10), delay: 300 }));
    await admin.submit.submitMany('pf', items);
    await waitFor(async () => (await admin.inspect.getCounts('pf')).ready === n, { timeoutMs: 10_000 });
    // NOTE: the bound is on work, not time (no timed assertion): one reserve moves at most 512 + 64 + count
    // tasks into their turns, reserves nothing while more due tasks of a priority wait unmoved (one of them
    // may be more urgent), and answers "look again now".
    const store = admin.app.get(DelayQueueStore);
    const first = await store.take('pf', { count: 1, ...TAKE }, [], 'c.test', 'flood-1');
    expect(first.reserved).toEqual([]);
    expect(first.nextDueIn).toBe(0);
    const turns = Number(await redis().get(`${store.keys('pf').waiting}:q:n`));
    expect(turns).toBeGreaterThan(0);
    expect(turns).toBeLessThanOrEqual(512 + 64 + 1);
    await start({ connection: target.connection, keyPrefix: prefix }, [W]);
    await waitFor(() => seen.length === n, { timeoutMs: 60_000, intervalMs: 100 });
    // in priority order, beyond the tasks a batch of 50 holds at once: no task of a level starts before the
    // last of the more urgent level, 100 starts of slack (two batches)
    const firstOf = new Map<number, number>();
    const lastOf = new Map<number, number>();
    seen.forEach((p, i) => {
      if (!firstOf.has(p)) firstOf.set(p, i);
      lastOf.set(p, i);
    });
    for (let p = 2; p <= 10; p++) expect(firstOf.get(p)!).toBeGreaterThan(lastOf.get(p - 1)! - 100);
  }, 120_000);

  it('bad input: typed errors, nothing written; ordered types refuse priorities', async () => {
    const prefix = uniquePrefix('prio-bad');
    const app = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { o: { ordered: true }, pb: {} }, route: routeTestOptions(prefix, 'm', 2) });
    for (const priority of [-1, 1.5, 1001, '1', null, Number.NaN]) {
      const error = await app.submit.submit('pb', {}, { priority: priority as number }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidSubmitOptionsError);
      expect((error as InvalidSubmitOptionsError).option).toBe('priority');
      expect(await app.submit.changePriority('pb', 'x', priority as number).catch((e: unknown) => e)).toBeInstanceOf(InvalidSubmitOptionsError);
    }
    expect(await app.inspect.getCounts('pb')).toMatchObject({ ready: 0, delayed: 0 });
    expect(await app.submit.changePriority('o', 'x', 1).catch((e: unknown) => e)).toBeInstanceOf(InvalidSubmitOptionsError);
    expect(await app.submit.submitOrdered('o', 'k', {}, { priority: 1 } as never).catch((e: unknown) => e)).toBeInstanceOf(InvalidSubmitOptionsError);
    for (const [options, option] of [
      [{ defaultPriority: -1 }, 'types.bad.defaultPriority'], [{ defaultPriority: 1001 }, 'types.bad.defaultPriority'],
      [{ agingMs: 0 }, 'types.bad.agingMs'], [{ agingMs: 2 ** 33 }, 'types.bad.agingMs'], [{ agingMs: 1.5 }, 'types.bad.agingMs'],
    ] as const) {
      const error = await startQueueApp({ connection: target.connection, keyPrefix: prefix, types: { bad: options as never }, workers: false }).then((a) => a.close(), (e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidOptionsError);
      expect((error as InvalidOptionsError).option).toBe(option);
    }
    const ordered = await startQueueApp({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions(prefix, 'm', 2) },
      [workerClass('ord', { ordered: true, defaultPriority: 2 }, () => undefined)]).then((a) => a.close(), (e: unknown) => e);
    expect((ordered as InvalidOptionsError).option).toBe('defaultPriority');
  });
});
