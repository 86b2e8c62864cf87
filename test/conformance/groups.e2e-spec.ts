/**
 * Conformance: groups of a delay-queue type (fair share per tenant, README "Groups: fair share per tenant"),
 * through `TaskGroupsService` and the other public services only (every engine).
 *
 * Pins down:
 * - round-robin: with concurrency 1, one group with a big backlog and small groups submitted after it take
 *   turns, one task each per round (stride scheduling, weight 1), each group FIFO; the big group's rest runs
 *   once the small ones are empty;
 * - groups on the same pass go in the order of their names, not in the order their tasks were submitted;
 * - weights: a group of weight 2 gets two turns to one (h l h | h l h | ...);
 * - pauseGroup / resumeGroup: a paused group's due tasks wait (getGroup: paused, waiting, due) while the other
 *   groups run; resumed, they run in order;
 * - per-group concurrency: the worker's `groupConcurrency` 1 runs one task of each group at a time (groups in
 *   parallel); setGroupConcurrency raises one group (getGroup.concurrency), null puts it back to the type's;
 * - drainGroup: removes the group's waiting tasks, due and delayed (answers how many), not its running one,
 *   nor other groups' or ungrouped tasks;
 * - getGroup (`{ group, waiting, due, running, paused, concurrency?, weight? }`; a group nobody used: zeros) and
 *   getGroups (`{ total, groups }`, the largest backlog first, without `due`; offset and limit; ties);
 * - bad input: a bad group on submit / submitMany is InvalidSubmitOptionsError ('group'), nothing written; bad
 *   run-time calls are InvalidArgumentError naming the argument; ordered types refuse groups (the services:
 *   InvalidArgumentError 'type'; submitOrdered: InvalidSubmitOptionsError).
 *
 * NOTE: on Redis, a paused group's due tasks count as ready (getCounts), so `settle` of their type would wait
 * for them; the cases with a paused group let the other tasks run, then pause the type to settle (see
 * `settleUntil`).
 */
import { Inject, Injectable } from '@nestjs/common';
import { InvalidArgumentError, InvalidSubmitOptionsError, TaskGroupsService, type Task } from 'nestjs-distributed-queue';
import { workerClass } from '../support/queue-app';
import { deferred, describeEngines, rejectionOf, type Engine, type EngineOptions } from './engine';

interface Job {
  g: string;
}

const starts: { id: string; group: string }[] = [];
/** Running handlers now, per group, and the most of each group at once. */
const running = new Map<string, number>();
const most = new Map<string, number>();
let mostAll = 0;
let gate = deferred();
/** Resolved once `startsWanted` tasks started. */
let enough = deferred();
let startsWanted = Infinity;

let groups!: TaskGroupsService;

/** Not a worker: it hands the case the engine's TaskGroupsService (the Engine has the four services only). */
@Injectable()
class GroupsProbe {
  constructor(@Inject(TaskGroupsService) service: TaskGroupsService) {
    groups = service;
  }
}

const record = (task: Task<Job>): void => {
  starts.push({ id: task.id, group: task.payload.g });
  if (starts.length >= startsWanted) enough.resolve();
};

const Rotation = workerClass<Job>('gr', { concurrency: 1, maxAttempts: 1 }, (task: Task<Job>) => record(task));

const Held = workerClass<Job>('gc', { concurrency: 4, groupConcurrency: 1, maxAttempts: 1 }, async (task: Task<Job>) => {
  const g = task.payload.g;
  running.set(g, (running.get(g) ?? 0) + 1);
  most.set(g, Math.max(most.get(g) ?? 0, running.get(g)!));
  mostAll = Math.max(mostAll, [...running.values()].reduce((a, b) => a + b, 0));
  record(task);
  try {
    await gate.promise;
  } finally {
    running.set(g, running.get(g)! - 1);
  }
});

const Ordered = workerClass('go', { ordered: true }, () => undefined);
const ROUTE: EngineOptions = { route: { qId: 'cfg', partitions: 2 } };

const item = (g: string, i: number, extra: object = {}) => ({ id: `${g}-${i}`, payload: { g }, group: g, ...extra });
const ids = () => starts.map((s) => s.id);

/**
 * Resolves once `starts` holds `n` starts in all (counted from the test's beginning: on Redis the tasks start
 * on their own, possibly before this is called).
 */
function startsReach(n: number): Promise<void> {
  enough = deferred();
  startsWanted = n;
  if (starts.length >= n) enough.resolve();
  return enough.promise;
}

/**
 * Settles `type` while some of its due tasks cannot run (a paused group): lets the others run until `done`,
 * then pauses the type (so that `settle` waits only for its running tasks) and resumes it once settled.
 */
async function settleUntil(engine: Engine, type: string, done: Promise<void>): Promise<void> {
  const settled = engine.settle([type]);
  await done;
  await engine.control.pause(type);
  await settled;
  await engine.control.resume(type);
}

describeEngines('groups', (start) => {
  afterEach(() => {
    gate.resolve();
    starts.length = 0;
    running.clear();
    most.clear();
    mostAll = 0;
    gate = deferred();
    enough = deferred();
    startsWanted = Infinity;
  });

  it('round-robin: small groups submitted after a big backlog get a turn each round; each group FIFO', async () => {
    const engine = await start({}, [Rotation, GroupsProbe]);
    await engine.control.pause('gr');
    await engine.submit.submitMany('gr', Array.from({ length: 8 }, (_, i) => item('big', i)));
    for (const g of ['s1', 's2', 's3']) await engine.submit.submitMany('gr', [item(g, 0), item(g, 1)]);
    await engine.control.resume('gr');
    await engine.settle(['gr']);
    expect(ids()).toEqual([
      'big-0', 's1-0', 's2-0', 's3-0',
      'big-1', 's1-1', 's2-1', 's3-1',
      'big-2', 'big-3', 'big-4', 'big-5', 'big-6', 'big-7',
    ]);
    expect(await engine.inspect.getCounts('gr')).toEqual({ delayed: 0, ready: 0, running: 0, dead: 0, done: 14 });
    expect(await groups.getGroups('gr')).toEqual({ total: 0, groups: [] });
  });

  it('groups on the same pass take their turns in the order of their names, not of their submission', async () => {
    const engine = await start({}, [Rotation, GroupsProbe]);
    await engine.control.pause('gr');
    // submitted zeta first, then mid, then alpha: each group joins the rotation at the same pass (0), and
    // groups of one pass go in the order of Redis's sorted set of passes: by name
    for (const g of ['zeta', 'mid', 'alpha']) await engine.submit.submitMany('gr', [item(g, 0), item(g, 1)]);
    await engine.control.resume('gr');
    await engine.settle(['gr']);
    expect(ids()).toEqual(['alpha-0', 'mid-0', 'zeta-0', 'alpha-1', 'mid-1', 'zeta-1']);
  });

  it('weights: a group of weight 2 gets two turns to one; getGroup shows the weight', async () => {
    const engine = await start({}, [Rotation, GroupsProbe]);
    await engine.control.pause('gr');
    await groups.setGroupWeight('gr', 'heavy', 2);
    await engine.submit.submitMany('gr', Array.from({ length: 6 }, (_, i) => item('heavy', i)));
    await engine.submit.submitMany('gr', Array.from({ length: 6 }, (_, i) => item('light', i)));
    await engine.control.resume('gr');
    await engine.settle(['gr']);
    // passes: heavy moves on by 1/2 a task, light by 1; a tie goes to the name first ('heavy')
    expect(starts.map((s) => s.group[0])).toEqual(['h', 'l', 'h', 'h', 'l', 'h', 'h', 'l', 'h', 'l', 'l', 'l']);
    expect(ids().filter((id) => id.startsWith('heavy'))).toEqual(Array.from({ length: 6 }, (_, i) => `heavy-${i}`));
    expect(await groups.getGroup('gr', 'heavy')).toEqual({ group: 'heavy', waiting: 0, due: 0, running: 0, paused: false, weight: 2 });
    await groups.setGroupWeight('gr', 'heavy', null);
    expect(await groups.getGroup('gr', 'heavy')).toEqual({ group: 'heavy', waiting: 0, due: 0, running: 0, paused: false });
  });

  it('pauseGroup holds one group (its tasks wait, the others run); resumeGroup runs them in order', async () => {
    const engine = await start({}, [Rotation, GroupsProbe]);
    await groups.pauseGroup('gr', 'quiet');
    expect(await groups.getGroup('gr', 'quiet')).toEqual({ group: 'quiet', waiting: 0, due: 0, running: 0, paused: true });
    await engine.control.pause('gr');
    await engine.submit.submitMany('gr', [item('quiet', 0), item('quiet', 1), item('quiet', 2, { delay: 60_000 })]);
    // a task without a group shares the group '' while groups have due tasks
    await engine.submit.submit('gr', { g: '' }, { id: 'plain' });
    await engine.submit.submitMany('gr', [item('loud', 0), item('loud', 1)]);
    await engine.control.resume('gr');
    await settleUntil(engine, 'gr', startsReach(3));
    expect(ids()).toEqual(['plain', 'loud-0', 'loud-1']);
    expect(await groups.getGroup('gr', 'quiet')).toEqual({ group: 'quiet', waiting: 3, due: 2, running: 0, paused: true });
    expect(await engine.inspect.getTask('gr', 'quiet-0')).toMatchObject({ state: 'ready', attempts: 0 });
    expect(await engine.control.isPaused('gr')).toBe(false);
    expect(await engine.inspect.getCounts('gr')).toEqual({ delayed: 1, ready: 2, running: 0, dead: 0, done: 3 });

    await groups.resumeGroup('gr', 'quiet');
    await engine.settle(['gr']);
    expect(ids()).toEqual(['plain', 'loud-0', 'loud-1', 'quiet-0', 'quiet-1']);
    expect(await groups.getGroup('gr', 'quiet')).toEqual({ group: 'quiet', waiting: 1, due: 0, running: 0, paused: false });
  });

  it('groupConcurrency 1: one task of each group at a time, groups in parallel; setGroupConcurrency raises one group', async () => {
    const engine = await start({}, [Held, GroupsProbe]);
    await engine.control.pause('gc');
    await engine.submit.submitMany('gc', [item('a', 0), item('a', 1), item('a', 2), item('b', 0), item('b', 1)]);
    await engine.control.resume('gc');
    const first = engine.settle(['gc']);
    await startsReach(2);
    expect(ids()).toEqual(['a-0', 'b-0']);
    expect(await groups.getGroup('gc', 'a')).toEqual({ group: 'a', waiting: 2, due: 2, running: 1, paused: false });
    expect(await groups.getGroup('gc', 'b')).toEqual({ group: 'b', waiting: 1, due: 1, running: 1, paused: false });
    expect(await engine.inspect.getCounts('gc')).toEqual({ delayed: 0, ready: 3, running: 2, dead: 0, done: 0 });
    gate.resolve();
    await first;
    expect(ids().filter((id) => id.startsWith('a'))).toEqual(['a-0', 'a-1', 'a-2']);
    expect(ids().filter((id) => id.startsWith('b'))).toEqual(['b-0', 'b-1']);
    expect(Object.fromEntries(most)).toEqual({ a: 1, b: 1 });
    expect(mostAll).toBe(2);

    // one group raised to 2, at run time
    gate = deferred();
    await groups.setGroupConcurrency('gc', 'a', 2);
    expect(await groups.getGroup('gc', 'a')).toEqual({ group: 'a', waiting: 0, due: 0, running: 0, paused: false, concurrency: 2 });
    await engine.control.pause('gc');
    await engine.submit.submitMany('gc', [item('a', 3), item('a', 4), item('a', 5)]);
    await engine.control.resume('gc');
    const second = engine.settle(['gc']);
    await startsReach(7);
    expect(ids().slice(5)).toEqual(['a-3', 'a-4']);
    expect(await groups.getGroup('gc', 'a')).toEqual({ group: 'a', waiting: 1, due: 1, running: 2, paused: false, concurrency: 2 });
    gate.resolve();
    await second;
    expect(most.get('a')).toBe(2);
    await groups.setGroupConcurrency('gc', 'a', null);
    expect(await groups.getGroup('gc', 'a')).toEqual({ group: 'a', waiting: 0, due: 0, running: 0, paused: false });
  });

  it('drainGroup removes the group\'s waiting tasks (due and delayed), not its running one nor anything else', async () => {
    const engine = await start({}, [Held, GroupsProbe]);
    await engine.submit.submit('gc', { g: 'x' }, { id: 'x-run', group: 'x' });
    const settled = engine.settle(['gc']);
    await startsReach(1);
    await engine.control.pause('gc');
    await engine.submit.submitMany('gc', [item('x', 0), item('x', 1), item('x', 2, { delay: 60_000 }), item('x', 3, { delay: 60_000 })]);
    await engine.submit.submit('gc', { g: '' }, { id: 'plain' });
    await engine.submit.submitMany('gc', [item('y', 0), item('y', 1, { delay: 60_000 })]);
    expect(await groups.getGroup('gc', 'x')).toEqual({ group: 'x', waiting: 4, due: 2, running: 1, paused: false });

    expect(await groups.drainGroup('gc', 'x')).toBe(4);
    expect(await groups.getGroup('gc', 'x')).toEqual({ group: 'x', waiting: 0, due: 0, running: 1, paused: false });
    expect(await Promise.all(['x-0', 'x-2', 'x-run', 'y-0', 'y-1', 'plain'].map((id) => engine.inspect.getState('gc', id))))
      .toEqual(['unknown', 'unknown', 'running', 'ready', 'delayed', 'ready']);
    expect(await engine.inspect.getCounts('gc')).toEqual({ delayed: 1, ready: 2, running: 1, dead: 0, done: 0 });
    expect(await groups.getGroups('gc')).toEqual({ total: 1, groups: [{ group: 'y', waiting: 2, running: 0, paused: false }] });
    expect(await groups.drainGroup('gc', 'x')).toBe(0);
    expect(await groups.drainGroup('gc', 'nobody')).toBe(0);

    gate.resolve();
    await settled;
    await engine.control.resume('gc');
    await engine.settle(['gc']);
    expect(ids()).toEqual(['x-run', 'plain', 'y-0']);
    expect(await engine.inspect.getState('gc', 'x-run')).toBe('done');
  });

  it('getGroup and getGroups: counts and settings, the largest backlog first, pages; a group nobody used', async () => {
    const engine = await start({}, [Rotation, GroupsProbe]);
    await engine.control.pause('gr');
    await engine.submit.submitMany('gr', [item('b', 0), item('b', 1), item('b', 2, { delay: 60_000 })]);
    await engine.submit.submitMany('gr', [item('c', 0), item('c', 1, { delay: 30_000 })]);
    await engine.submit.submitMany('gr', [item('a', 0)]);
    await groups.setGroupWeight('gr', 'c', 4);
    await groups.setGroupConcurrency('gr', 'b', 5);
    await groups.pauseGroup('gr', 'a');

    expect(await groups.getGroup('gr', 'b')).toEqual({ group: 'b', waiting: 3, due: 2, running: 0, paused: false, concurrency: 5 });
    expect(await groups.getGroup('gr', 'c')).toEqual({ group: 'c', waiting: 2, due: 1, running: 0, paused: false, weight: 4 });
    expect(await groups.getGroup('gr', 'a')).toEqual({ group: 'a', waiting: 1, due: 1, running: 0, paused: true });
    expect(await groups.getGroup('gr', 'nobody')).toEqual({ group: 'nobody', waiting: 0, due: 0, running: 0, paused: false });
    expect(await groups.getGroups('gr')).toEqual({
      total: 3,
      groups: [
        { group: 'b', waiting: 3, running: 0, paused: false, concurrency: 5 },
        { group: 'c', waiting: 2, running: 0, paused: false, weight: 4 },
        { group: 'a', waiting: 1, running: 0, paused: true },
      ],
    });
    expect(await groups.getGroups('gr', { offset: 1, limit: 1 })).toEqual({ total: 3, groups: [{ group: 'c', waiting: 2, running: 0, paused: false, weight: 4 }] });
    expect(await groups.getGroups('gr', { offset: 3 })).toEqual({ total: 3, groups: [] });
    // getCounts counts the due tasks waiting in groups as ready
    expect(await engine.inspect.getCounts('gr')).toEqual({ delayed: 2, ready: 4, running: 0, dead: 0, done: 0 });
    // a cancelled task leaves its group's backlog
    expect(await engine.submit.cancel('gr', 'b-0')).toBe('cancelled');
    expect(await groups.getGroup('gr', 'b')).toMatchObject({ waiting: 2, due: 1 });

    // equal backlogs (b 2, c 2; then d 1, a 1): Redis's sorted set of backlogs, read largest first, puts the
    // later name first
    await engine.submit.submit('gr', { g: 'd' }, { id: 'd-0', group: 'd' });
    expect((await groups.getGroups('gr')).groups.map((g) => [g.group, g.waiting])).toEqual([['c', 2], ['b', 2], ['d', 1], ['a', 1]]);
  });

  it("obliterate (forced) forgets the type's groups, their settings and an operator's limits: as if nobody used them", async () => {
    const engine = await start({}, [Rotation, GroupsProbe]);
    await engine.control.pause('gr');
    const untouched = await engine.control.getLimits('gr');
    await engine.submit.submitMany('gr', [item('b', 0), item('b', 1, { delay: 60_000 })]);
    await groups.setGroupWeight('gr', 'b', 4);
    await groups.setGroupConcurrency('gr', 'b', 2);
    await groups.pauseGroup('gr', 'a');
    await engine.control.setGlobalConcurrency('gr', 3);
    await engine.control.obliterate('gr', { force: true });
    const nobody = (group: string) => ({ group, waiting: 0, due: 0, running: 0, paused: false });
    expect(await groups.getGroup('gr', 'b')).toEqual(nobody('b'));
    expect(await groups.getGroup('gr', 'a')).toEqual(nobody('a'));
    expect(await groups.getGroups('gr')).toEqual({ total: 0, groups: [] });
    expect(await engine.inspect.getCounts('gr')).toEqual({ delayed: 0, ready: 0, running: 0, dead: 0, done: 0 });
    expect(await engine.control.isPaused('gr')).toBe(false);
    expect(await engine.control.getLimits('gr')).toEqual(untouched);
  });

  it('bad input: a bad group is InvalidSubmitOptionsError (nothing written), bad calls InvalidArgumentError; ordered types refuse groups', async () => {
    const engine = await start(ROUTE, [Rotation, Ordered, GroupsProbe]);
    for (const group of ['', 'x'.repeat(257), 5, null]) {
      const submitted = await rejectionOf(engine.submit.submit('gr', { g: 'bad' }, { id: 'bad', group: group as string }));
      expect(submitted).toBeInstanceOf(InvalidSubmitOptionsError);
      expect(submitted).toMatchObject({ option: 'group' });
      const many = await rejectionOf(engine.submit.submitMany('gr', [item('ok', 0), { id: 'bad', payload: { g: 'bad' }, group: group as string }]));
      expect(many).toBeInstanceOf(InvalidSubmitOptionsError);
      expect(many).toMatchObject({ option: 'group' });
      const paused = await rejectionOf(groups.pauseGroup('gr', group as string));
      expect(paused).toBeInstanceOf(InvalidArgumentError);
      expect(paused).toMatchObject({ argument: 'group' });
    }
    expect(await engine.inspect.getCounts('gr')).toEqual({ delayed: 0, ready: 0, running: 0, dead: 0, done: 0 });
    expect(await engine.inspect.getState('gr', 'ok-0')).toBe('unknown');
    expect(await groups.getGroups('gr')).toEqual({ total: 0, groups: [] });
    // a group of 256 characters is fine
    await engine.control.pause('gr');
    await engine.submit.submit('gr', { g: 'long' }, { id: 'long', group: 'x'.repeat(256) });
    expect(await groups.getGroup('gr', 'x'.repeat(256))).toMatchObject({ waiting: 1, due: 1 });

    const calls: [() => Promise<unknown>, string][] = [
      [() => groups.setGroupConcurrency('gr', 'g', 0), 'n'],
      [() => groups.setGroupConcurrency('gr', 'g', 2.5), 'n'],
      [() => groups.setGroupWeight('gr', 'g', 0), 'weight'],
      [() => groups.setGroupWeight('gr', 'g', 1.5), 'weight'],
      [() => groups.setGroupWeight('gr', 'g', 1001), 'weight'],
      [() => groups.getGroups('gr', { limit: 0 }), 'limit'],
      [() => groups.getGroups('gr', { limit: 1001 }), 'limit'],
      [() => groups.getGroups('gr', { offset: -1 }), 'offset'],
      [() => groups.getGroup('gr', ''), 'group'],
      [() => groups.drainGroup('gr', ''), 'group'],
      [() => groups.resumeGroup('gr', 'x'.repeat(257)), 'group'],
      [() => groups.pauseGroup('go', 'g'), 'type'],
      [() => groups.getGroup('go', 'g'), 'type'],
      [() => groups.getGroups('go'), 'type'],
      [() => groups.drainGroup('go', 'g'), 'type'],
      [() => groups.setGroupConcurrency('go', 'g', 1), 'type'],
    ];
    for (const [call, argument] of calls) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toMatchObject({ argument });
    }
    expect(await rejectionOf(engine.submit.submitOrdered('go', 'k', {}, { group: 'g' } as never))).toBeInstanceOf(InvalidSubmitOptionsError);
    expect(await rejectionOf(engine.submit.submitOrderedMany('go', [{ key: 'k', payload: {}, group: 'g' } as never]))).toBeInstanceOf(InvalidSubmitOptionsError);
    expect((await engine.inspect.getCounts('go')).ready).toBe(0);
  });
});
