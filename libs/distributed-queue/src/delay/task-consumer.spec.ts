import { DEFAULT_TASK_LOGS } from '../runtime/report-text';
import { DEFAULT_WORKER_OPTIONS, mergeWorkerOptions } from '../options/resolve-options';
import type { DelayQueueStore, TakeOptions, TakeResult } from './delay-queue.store';
import { TaskConsumer } from './task-consumer';
import { PREFETCH_STALL_MS } from '../runtime/prefetch';
import { waitFor } from '../../../../test/support/wait';

const silent = { log: () => undefined, error: () => undefined, warn: () => undefined, debug: () => undefined };

/**
 * A store whose takes answer only when the test says so: it shows how many takes the consumer keeps in
 * flight. `backlog` tasks wait, all due.
 */
function heldStore(backlog: number) {
  let waiting = backlog;
  let next = 0;
  const pending: { count: number; resolve: (result: TakeResult) => void }[] = [];
  const store = {
    take: (_type: string, options: TakeOptions) =>
      new Promise<TakeResult>((resolve) => pending.push({ count: options.count, resolve })),
    touchPresence: () => Promise.resolve(),
    leavePresence: () => Promise.resolve(),
    extend: () => Promise.resolve([]),
    release: () => Promise.resolve(),
  };
  /** Answers the oldest take in flight with up to its count of due tasks. */
  const answerOne = () => {
    const take = pending.shift();
    if (!take) throw new Error('no take in flight');
    const n = Math.min(take.count, waiting);
    waiting -= n;
    const reserved = Array.from({ length: n }, () => ({ id: `t${next}`, attempt: 1, token: `k${next++}`, dueAt: 0, payload: '{}' }));
    take.resolve({ now: Date.now(), nextDueIn: waiting > 0 ? 0 : -1, refused: [], reserved });
  };
  return { store: store as unknown as DelayQueueStore, pending, answerOne, done: () => next };
}

/** Lets setImmediate-scheduled pumps and promise callbacks run. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

async function settleTurns(times = 5): Promise<void> {
  for (let i = 0; i < times; i++) await turn();
}

/**
 * Stops the consumer's clock (Date.now) until the returned spy is restored, so that quick handlers take
 * 0 ms: on a loaded machine a real clock can tick between a start and its finish, and a mean handler time of
 * 1 ms allows fewer tasks reserved ahead than the tests expect.
 */
const freezeClock = () => jest.spyOn(Date, 'now').mockReturnValue(Date.now());

describe('TaskConsumer fetching', () => {
  let consumer: TaskConsumer | undefined;
  let clock: jest.SpyInstance | undefined;
  afterEach(async () => {
    await consumer?.stop(0).catch(() => undefined);
    consumer = undefined;
    clock?.mockRestore();
  });

  /** A consumer at concurrency 50 with synchronous handlers, started over `backlog` due tasks. */
  async function started(backlog: number) {
    clock = freezeClock();
    const held = heldStore(backlog);
    const options = mergeWorkerOptions(DEFAULT_WORKER_OPTIONS, { concurrency: 50 });
    consumer = new TaskConsumer('t', { handle: () => undefined }, options, held.store, { keepDone: 10, maxResultBytes: 65536, maxProgressBytes: 4096, taskLogs: DEFAULT_TASK_LOGS }, silent);
    consumer.start();
    await settleTurns();
    return held;
  }

  it('keeps two takes in flight while a backlog remains, even when handlers finish at once', async () => {
    // Before: a take went out only after the previous one answered (its tasks done before the next pump),
    // so Redis and the worker waited on each other in turn.
    const held = await started(1000);
    expect(held.pending.map((t) => t.count)).toEqual([25]);
    held.answerOne(); // 25 of 1000: more are due
    await settleTurns();
    // two takes, each for half of the 50 slots and the 150 it may now hold ahead (its handlers proved quick)
    expect(held.pending.map((t) => t.count)).toEqual([100, 100]);
    let most = 0;
    const counts: number[] = [];
    for (let i = 0; i < 20 && held.pending.length > 0; i++) {
      held.answerOne();
      await settleTurns();
      most = Math.max(most, held.pending.length);
      counts.push(...held.pending.map((t) => t.count));
      // handlers this quick let it reserve up to its concurrency again, ahead of free slots
      expect(held.pending.reduce((sum, t) => sum + t.count, 0) + consumer!.busy).toBeLessThanOrEqual(200);
    }
    expect(most).toBe(2);
    expect(Math.max(...counts)).toBe(100);
    expect(held.done()).toBeGreaterThan(25 * 10);
  });

  it('sends one take when the last one found no more due tasks', async () => {
    const held = await started(10);
    held.answerOne(); // all 10: nothing more waits
    await settleTurns();
    // Only the acks may go out (after their short delay); no second take asks for tasks.
    expect(held.pending.filter((t) => t.count > 0)).toEqual([]);
    expect(held.done()).toBe(10);
  });
});

describe('TaskConsumer reserving ahead of free slots', () => {
  /** Concurrency 4; tasks `q*` finish at once, the others run until the test releases them. */
  async function setUp() {
    const takes: { count: number; resolve: (ids: string[]) => void }[] = [];
    const calls = { fail: [] as [string, string][], release: [] as string[][], extend: [] as string[][], lost: [] as string[] };
    const store = {
      take: (_type: string, options: TakeOptions) =>
        new Promise<TakeResult>((resolve) =>
          takes.push({
            count: options.count,
            resolve: (ids) => resolve({ now: 0, nextDueIn: 0, refused: [], reserved: ids.map((id) => ({ id, attempt: 1, token: `k-${id}`, dueAt: 0, payload: '{}' })) }),
          }),
        ),
      fail: (_type: string, id: string, _token: string, _delay: number, error: { name: string }) => {
        calls.fail.push([id, error.name]);
        return Promise.resolve('dropped');
      },
      extend: (_type: string, _lease: number, held: [string, string][]) => {
        calls.extend.push(held.map(([id]) => id));
        return Promise.resolve(calls.lost.splice(0));
      },
      release: (_type: string, held: [string, string][]) => {
        calls.release.push(held.map(([id]) => id));
        return Promise.resolve(held.length);
      },
      touchPresence: () => Promise.resolve(),
      leavePresence: () => Promise.resolve(),
    };
    const started: string[] = [];
    const blocked = new Map<string, () => void>();
    const handler = {
      handle: (task: { id: string }) => {
        started.push(task.id);
        if (task.id.startsWith('q')) return undefined;
        return new Promise<void>((resolve) => blocked.set(task.id, resolve));
      },
    };
    const options = mergeWorkerOptions(DEFAULT_WORKER_OPTIONS, { concurrency: 4, pollIntervalMs: 60_000 });
    const consumer = new TaskConsumer('t', handler, options, store as unknown as DelayQueueStore, { keepDone: 0, maxResultBytes: 65536, maxProgressBytes: 4096, taskLogs: DEFAULT_TASK_LOGS }, silent);
    consumer.start();
    await settleTurns();
    const answer = async (ids: string[]) => {
      const take = takes.shift();
      if (!take) throw new Error('no take in flight');
      take.resolve(ids.slice(0, take.count));
      await settleTurns();
      return take.count;
    };
    return { consumer, takes, calls, started, blocked, answer };
  }

  /** `n` task ids `<prefix>0`, `<prefix>1`, ... */
  const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  const A = ids('a', 8);
  const B = ids('b', 8);

  /**
   * Quick tasks first, then two takes of 8 (half of 4 slots and 12 ahead) answered in full: 16 held. With
   * `frozen` the clock stays stopped afterwards (restore it at the end of the test): no slot frees, and the
   * tasks held ahead would be handed back once 100 ms passed (PREFETCH_STALL_MS), as on a loaded machine.
   */
  async function filled(frozen = false) {
    const t = await setUp();
    // No handler has finished yet: a take asks for half the slots, no more.
    expect(t.takes.map((x) => x.count)).toEqual([2]);
    const clock = freezeClock(); // the quick tasks take 0 ms: 12 may be held ahead (a mean of 1 ms: 8)
    try {
      await t.answer(['q1', 'q2']);
    } finally {
      if (!frozen) clock.mockRestore();
    }
    // Both finished at once: now up to 3 x 4 more than the slots may be held, half of all per take.
    expect(t.takes.map((x) => x.count)).toEqual([8, 8]);
    await t.answer(A);
    await t.answer(B);
    return t;
  }

  it('reserves ahead only once handlers prove quick, runs at most concurrency, and starts the rest as slots free', async () => {
    const t = await filled(true);
    try {
      expect(t.started).toEqual(['q1', 'q2', ...A.slice(0, 4)]);
      expect(t.consumer.busy).toBe(16);
      expect(t.takes).toEqual([]); // full: nothing more asked for
      t.blocked.get('a0')!();
      await settleTurns();
      expect(t.started.slice(2)).toEqual(A.slice(0, 5)); // the oldest waiting one took the slot
    } finally {
      for (const release of t.blocked.values()) release();
      await t.consumer.stop(0);
      jest.restoreAllMocks();
    }
  });

  it('renews the leases of waiting tasks, lets a lost one go, records a cancelled one, and hands the rest back at stop', async () => {
    const t = await filled(true);
    try {
      await renewCancelStop(t);
    } finally {
      jest.restoreAllMocks();
    }
  });

  async function renewCancelStop(t: Awaited<ReturnType<typeof filled>>): Promise<void> {
    t.calls.lost.push('a5');
    await t.consumer.renewLeases();
    expect(t.calls.extend.at(-1)).toEqual([...A, ...B]);
    t.consumer.onEvent('c:a6');
    await settleTurns();
    expect(t.calls.fail).toEqual([['a6', 'TaskCancelledError']]);
    expect(t.consumer.busy).toBe(14); // a0-a3 running, the rest waiting

    const stopping = t.consumer.stop(50);
    await settleTurns();
    expect(t.calls.release[0]).toEqual(['a4', 'a7', ...B]);
    for (const release of t.blocked.values()) release();
    await stopping;
    // never started: the lost, the cancelled and the handed-back ones
    expect(t.started).toEqual(['q1', 'q2', ...A.slice(0, 4)]);
  }

  it('hands the tasks reserved ahead back when no slot frees (handlers hang), and reserves none ahead until one finishes', async () => {
    const before = Date.now();
    const t = await filled();
    try {
      expect(t.consumer.busy).toBe(16);
      // Timers fire late on a loaded machine: wait for the hand-back (bounded), then check it was not early.
      await waitFor(() => t.calls.release.length > 0, { timeoutMs: 5000, intervalMs: 10, message: 'tasks reserved ahead handed back' });
      expect(Date.now() - before).toBeGreaterThanOrEqual(PREFETCH_STALL_MS);
      await settleTurns();
      expect(t.calls.release).toEqual([[...A.slice(4), ...B]]);
      expect(t.consumer.busy).toBe(4);
      expect(t.takes).toEqual([]); // all four slots are taken and nothing may be held ahead
      t.blocked.get('a0')!();
      await settleTurns();
      // a handler finished (slowly): one slot is free again, and one task is asked for
      expect(t.takes.map((x) => x.count)).toEqual([1]);
      expect(t.started).toEqual(['q1', 'q2', ...A.slice(0, 4)]);
    } finally {
      for (const release of t.blocked.values()) release();
      await t.consumer.stop(0);
    }
  });
});
