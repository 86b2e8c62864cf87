/**
 * Conformance: ordered tasks (the route queue), one application holding every partition.
 *
 * Pins down:
 * - submitOrdered answers `{ id, partition, outcome }`: 'queued' now, 'scheduled' with a delay; the given id
 *   or a random one of 16 characters; the partition of a key is FNV-1a (32 bit, over its UTF-8 bytes) modulo
 *   the partition count ('a' 0, 'b' 1, 'c' 2, 'd' 3, 'acct-1' 0 of 4);
 * - the handler's task: id, type, key, payload, attempt, fence `{ partition, epoch }`;
 * - the tasks of one key run one after another in submission order; other keys (in other partitions and in
 *   the same one) run meanwhile;
 * - a delayed ordered task enters its partition when due, not before; falling due into its full partition
 *   (rejectStrategy Exception or Discard), its move fails with PartitionFullError (partition, limit), in the
 *   route's delay type's failed and dead events and dead letters; a refused move is tried again (re-driven
 *   once there is room, it enters);
 * - a failed attempt is retried after the backoff before the key's next task; past maxAttempts the task is a
 *   dead letter (listOrderedDead: partition, id, type, key, payload, diedAt, error) and the key goes on;
 *   redriveOrderedDead runs it again;
 * - getCounts of an ordered type: the route queue's counts with each partition's, `done` 0; listTasks
 *   'ready' with key and partition; pause / resume of the route queue;
 * - bad input: an ordered type refuses submit, submitAndWait, priorities, dedupe (InvalidSubmitOptionsError);
 *   a delay type refuses submitOrdered; an empty key.
 */
import { Injectable } from '@nestjs/common';
import { InvalidSubmitOptionsError, OnTaskEvent, type Task, type TaskEvent } from 'nestjs-distributed-queue';
import { workerClass } from '../support/queue-app';
import { deferred, describeEngines, rejectionOf, until, type EngineOptions } from './engine';

interface Job {
  n: number;
  hold?: boolean;
  fail?: 'once' | 'untilHealed';
  last?: boolean;
}

const starts: { id: string; type: string; key?: string; n: number; attempt: number; fence?: { partition: number; epoch: number }; payload: Job }[] = [];
let gate = deferred();
let held = deferred();
let lastDone = deferred();
let healed = false;

const Worker = workerClass<Job>('ol', { ordered: true, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 100, jitter: 0 } }, async (task: Task<Job>) => {
  const job = task.payload;
  starts.push({ id: task.id, type: task.type, key: task.key, n: job.n, attempt: task.attempt, fence: task.fence, payload: job });
  if (job.hold) {
    held.resolve();
    await gate.promise;
  }
  if (job.fail === 'once' && task.attempt === 1) throw new Error(`once ${task.key} ${job.n}`);
  if (job.fail === 'untilHealed' && !healed) throw new Error(`sick ${task.key} ${job.n} ${task.attempt}`);
  if (job.last) lastDone.resolve();
});
const Plain = workerClass('plain', { concurrency: 1 }, () => undefined);

/** The fleet events of the moves of delayed ordered tasks (the route's delay type, `__route__.<qId>`). */
const moves: TaskEvent[] = [];
@Injectable()
class MoveEvents {
  @OnTaskEvent('__route__.cf', ['failed', 'dead'], { scope: 'fleet' })
  on(event: TaskEvent): void {
    moves.push(event);
  }
}

const ROUTE: EngineOptions = { route: { qId: 'cf', partitions: 4 } };
const startsOf = (key: string) => starts.filter((s) => s.key === key).map((s) => (s.attempt > 1 ? `${s.n}#${s.attempt}` : String(s.n)));

describeEngines('ordered tasks', (start) => {
  afterEach(() => {
    gate.resolve();
    starts.length = 0;
    gate = deferred();
    held = deferred();
    lastDone = deferred();
    healed = false;
    moves.length = 0;
  });

  it('submitOrdered answers the id, the key\'s partition and the outcome; the handler gets key and fence', async () => {
    const engine = await start(ROUTE, [Worker]);
    const given = await engine.submit.submitOrdered('ol', 'a', { n: 0 }, { id: 'given' });
    expect(given).toEqual({ id: 'given', partition: 0, outcome: 'queued' });
    const generated = await engine.submit.submitOrdered('ol', 'b', { n: 0 });
    expect(generated).toEqual({ id: expect.any(String), partition: 1, outcome: 'queued' });
    expect(generated.id).toHaveLength(16);
    const many = await engine.submit.submitOrderedMany('ol', [
      { key: 'c', payload: { n: 0 } }, { key: 'd', payload: { n: 0 } }, { key: 'acct-1', payload: { n: 0 }, id: 'x' }, { key: 'ключ', payload: { n: 0 } },
    ]);
    expect(many.map((r) => [r.partition, r.outcome])).toEqual([[2, 'queued'], [3, 'queued'], [0, 'queued'], [1, 'queued']]);
    expect(many[2].id).toBe('x');
    await engine.settle(['ol']);
    expect(starts.find((s) => s.id === 'given')).toEqual({
      id: 'given', type: 'ol', key: 'a', n: 0, attempt: 1, fence: { partition: 0, epoch: expect.any(Number) }, payload: { n: 0 },
    });
    expect(starts.map((s) => [s.key, s.fence?.partition]).sort()).toEqual([['a', 0], ['acct-1', 0], ['b', 1], ['c', 2], ['d', 3], ['ключ', 1]]);
    expect(await engine.inspect.getCounts('ol')).toMatchObject({ delayed: 0, ready: 0, running: 0, dead: 0, done: 0 });
  });

  it('runs the tasks of one key in submission order, one at a time; other keys go on meanwhile', async () => {
    const engine = await start(ROUTE, [Worker]);
    const items = [];
    for (let n = 0; n < 4; n++) {
      for (const key of ['a', 'b', 'acct-1']) items.push({ key, payload: { n, hold: key === 'a' && n === 0, last: key === 'b' && n === 3 } });
    }
    await engine.submit.submitOrderedMany('ol', items);
    for (let n = 4; n < 6; n++) await engine.submit.submitOrdered('ol', 'a', { n });
    const settled = engine.settle(['ol']);
    await held.promise;
    await lastDone.promise;
    // b (another partition) and acct-1 (a's partition) ran while a's first task held its key
    expect(startsOf('a')).toEqual(['0']);
    expect(startsOf('b')).toEqual(['0', '1', '2', '3']);
    gate.resolve();
    await settled;
    expect(startsOf('a')).toEqual(['0', '1', '2', '3', '4', '5']);
    expect(startsOf('acct-1')).toEqual(['0', '1', '2', '3']);
  });

  it('a delayed ordered task is scheduled and enters its partition when due, behind what its key queued', async () => {
    const engine = await start(ROUTE, [Worker]);
    // NOTE: Redis: due in 1 s, a margin for the reads and the submit below on a loaded machine
    const later = await engine.submit.submitOrdered('ol', 'c', { n: 0 }, { delay: 1000 });
    expect(later).toEqual({ id: expect.any(String), partition: 2, outcome: 'scheduled' });
    const [listed] = await engine.inspect.listTasks('ol', 'delayed');
    expect(listed).toMatchObject({ id: later.id, type: 'ol', state: 'delayed', key: 'c', partition: 2, payload: { n: 0 } });
    expect(await engine.inspect.getCounts('ol')).toMatchObject({ delayed: 1, ready: 0, running: 0 });
    await engine.submit.submitOrdered('ol', 'c', { n: 1 });
    // NOTE: Redis: real time also passes while settle reads the counts (a wide margin before the due time)
    await engine.advance(100);
    expect(startsOf('c')).toEqual(['1']);
    await engine.advance(900);
    expect(startsOf('c')).toEqual(['1', '0']);
    expect(await engine.inspect.getCounts('ol')).toMatchObject({ delayed: 0, ready: 0, running: 0, dead: 0 });
  });

  it.each(['Exception', 'Discard'] as const)('a delayed ordered task falling due into its full partition (%s) fails its move with PartitionFullError', async (rejectStrategy) => {
    const route = { qId: 'cf', partitions: 4, maxPartitionSize: 1, rejectStrategy };
    // NOTE: the mover's attempts are the module's defaults: one, so that the failed move is a dead letter at once.
    const engine = await start({ route, defaults: { maxAttempts: 1 } }, [Worker, MoveEvents]);
    await engine.control.pause('ol');
    await engine.submit.submitOrdered('ol', 'c', { n: 0 });
    const later = await engine.submit.submitOrdered('ol', 'c', { n: 1 }, { delay: 300 });
    await engine.advance(300);
    await until(async () => moves.length === 2, 'the failed and dead events of the move');
    const error = { name: 'PartitionFullError', message: 'Route queue partition 2 is full (1 waiting tasks)' };
    expect(moves.map((e) => [e.event, e.task.id, e.error?.name, e.error?.message])).toEqual([
      ['failed', later.id, error.name, error.message], ['dead', later.id, error.name, error.message],
    ]);
    const dead = await engine.inspect.listDead('__route__.cf');
    expect(dead.tasks.map((t) => [t.id, t.error.name, t.error.message])).toEqual([[later.id, error.name, error.message]]);
  });

  it.each(['Exception', 'Discard'] as const)('a move its full partition refused (%s) is tried again: re-driven once there is room, the task enters and runs', async (rejectStrategy) => {
    const route = { qId: 'cf', partitions: 4, maxPartitionSize: 1, rejectStrategy };
    const engine = await start({ route, defaults: { maxAttempts: 1 } }, [Worker, MoveEvents]);
    await engine.control.pause('ol');
    await engine.submit.submitOrdered('ol', 'c', { n: 0 });
    await engine.submit.submitOrdered('ol', 'c', { n: 1 }, { delay: 300 });
    await engine.advance(300);
    await until(async () => moves.some((e) => e.event === 'dead'), 'the move failed');
    await engine.control.resume('ol');
    await engine.settle(['ol']);
    expect(startsOf('c')).toEqual(['0']);
    // NOTE: the re-driven move repeats the refused one's call (named after the task): it must not get its reply.
    expect(await engine.inspect.redriveDead('__route__.cf')).toBe(1);
    await engine.advance(0);
    await engine.settle(['ol']);
    await until(async () => startsOf('c').length === 2, 'the re-driven task ran');
    expect(startsOf('c')).toEqual(['0', '1']);
    expect(moves.map((e) => e.event)).toEqual(['failed', 'dead']);
  });

  it('retries a failed attempt after its backoff before the key\'s next task; a dead letter does not stop its key', async () => {
    const engine = await start(ROUTE, [Worker]);
    await engine.submit.submitOrderedMany('ol', [
      { key: 'a', payload: { n: 0, fail: 'once' } }, { key: 'a', payload: { n: 1 } },
      { key: 'c', payload: { n: 0, fail: 'untilHealed' }, id: 'sick' }, { key: 'c', payload: { n: 1 } },
      { key: 'b', payload: { n: 0 } },
    ]);
    await engine.settle(['ol']);
    await engine.advance(100);
    expect(startsOf('a')).toEqual(['0', '0#2', '1']);
    expect(startsOf('c')).toEqual(['0', '0#2', '1']);
    expect(startsOf('b')).toEqual(['0']);
    const dead = await engine.inspect.listOrderedDead();
    expect(dead).toEqual([{
      partition: 2, id: 'sick', type: 'ol', key: 'c', payload: { n: 0, fail: 'untilHealed' }, diedAt: expect.any(Number),
      error: { name: 'Error', message: 'sick c 0 2', attempts: 2, stack: expect.stringMatching(/^Error: sick c 0 2\n/) },
    }]);
    const counts = await engine.inspect.getCounts('ol');
    expect(counts).toMatchObject({ delayed: 0, ready: 0, running: 0, dead: 1, done: 0 });
    expect(counts.partitions).toEqual([
      { partition: 0, ready: 0, running: 0, dead: 0 }, { partition: 1, ready: 0, running: 0, dead: 0 },
      { partition: 2, ready: 0, running: 0, dead: 1 }, { partition: 3, ready: 0, running: 0, dead: 0 },
    ]);
    healed = true;
    expect(await engine.inspect.redriveOrderedDead()).toBe(1);
    await engine.settle(['ol']);
    expect(startsOf('c')).toEqual(['0', '0#2', '1', '0']);
    expect(await engine.inspect.listOrderedDead()).toEqual([]);
    expect((await engine.inspect.getCounts('ol')).dead).toBe(0);
  });

  it('pause holds the route queue (counts and listTasks show the waiting tasks); resume runs them in key order', async () => {
    const engine = await start(ROUTE, [Worker]);
    await engine.control.pause('ol');
    expect(await engine.control.isPaused('ol')).toBe(true);
    const results = await engine.submit.submitOrderedMany('ol', [
      { key: 'a', payload: { n: 0 } }, { key: 'b', payload: { n: 0 } }, { key: 'a', payload: { n: 1 } }, { key: 'd', payload: { n: 0 } },
    ]);
    await engine.advance(100);
    expect(starts).toEqual([]);
    const counts = await engine.inspect.getCounts('ol');
    expect(counts).toEqual({
      delayed: 0, ready: 4, running: 0, dead: 0, done: 0,
      partitions: [
        { partition: 0, ready: 2, running: 0, dead: 0 }, { partition: 1, ready: 1, running: 0, dead: 0 },
        { partition: 2, ready: 0, running: 0, dead: 0 }, { partition: 3, ready: 1, running: 0, dead: 0 },
      ],
    });
    const ready = await engine.inspect.listTasks('ol', 'ready');
    expect(ready.map((t) => [t.id, t.type, t.state, t.key, t.partition, t.payload])).toEqual([
      [results[0].id, 'ol', 'ready', 'a', 0, { n: 0 }], [results[2].id, 'ol', 'ready', 'a', 0, { n: 1 }],
      [results[1].id, 'ol', 'ready', 'b', 1, { n: 0 }], [results[3].id, 'ol', 'ready', 'd', 3, { n: 0 }],
    ]);
    expect(await engine.inspect.listTasks('ol', 'done')).toEqual([]);
    await engine.control.resume('ol');
    expect(await engine.control.isPaused('ol')).toBe(false);
    await engine.settle(['ol']);
    expect(startsOf('a')).toEqual(['0', '1']);
    expect(starts.map((s) => s.key).sort()).toEqual(['a', 'a', 'b', 'd']);
  });

  it('refuses the wrong calls for each kind of type and bad keys with InvalidSubmitOptionsError, writing nothing', async () => {
    const engine = await start(ROUTE, [Worker, Plain]);
    const cases: [string, () => Promise<unknown>, string][] = [
      ['submit of an ordered type', () => engine.submit.submit('ol', { n: 0 }), 'key'],
      ['submitMany of an ordered type', () => engine.submit.submitMany('ol', [{ payload: { n: 0 } }]), 'key'],
      ['submitAndWait of an ordered type', () => engine.submit.submitAndWait('ol', { n: 0 }), 'key'],
      ['submitOrdered of a delay type', () => engine.submit.submitOrdered('plain', 'k', {}), 'key'],
      ['an empty key', () => engine.submit.submitOrdered('ol', '', { n: 0 }), 'key'],
      ['a priority', () => engine.submit.submitOrdered('ol', 'k', { n: 0 }, { priority: 1 } as never), 'priority'],
      ['dedupe', () => engine.submit.submitOrdered('ol', 'k', { n: 0 }, { dedupe: { key: 'k' } } as never), 'dedupe'],
      ['delay and runAt', () => engine.submit.submitOrdered('ol', 'k', { n: 0 }, { delay: 5, runAt: 1000 }), 'delay'],
      ['one bad item of many', () => engine.submit.submitOrderedMany('ol', [{ key: 'a', payload: { n: 0 } }, { key: '', payload: { n: 1 } }]), 'key'],
    ];
    for (const [label, call, option] of cases) {
      const error = await rejectionOf(call());
      expect([label, error]).toEqual([label, expect.any(InvalidSubmitOptionsError)]);
      expect([label, error]).toEqual([label, expect.objectContaining({ option })]);
    }
    await engine.settle(['ol']);
    expect(starts).toEqual([]);
    expect(await engine.inspect.getCounts('ol')).toMatchObject({ delayed: 0, ready: 0, running: 0, dead: 0, done: 0 });
  });
});
