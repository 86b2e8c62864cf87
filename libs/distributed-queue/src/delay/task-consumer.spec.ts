import { DEFAULT_WORKER_OPTIONS, mergeWorkerOptions } from '../options/resolve-options';
import type { DelayQueueStore, TakeOptions, TakeResult } from './delay-queue.store';
import { TaskConsumer } from './task-consumer';

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

describe('TaskConsumer fetching', () => {
  let consumer: TaskConsumer | undefined;
  afterEach(async () => {
    await consumer?.stop(0).catch(() => undefined);
    consumer = undefined;
  });

  /** A consumer at concurrency 50 with synchronous handlers, started over `backlog` due tasks. */
  async function started(backlog: number) {
    const held = heldStore(backlog);
    const options = mergeWorkerOptions(DEFAULT_WORKER_OPTIONS, { concurrency: 50 });
    consumer = new TaskConsumer('t', { handle: () => undefined }, options, held.store, 10, silent);
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
    expect(held.pending.map((t) => t.count)).toEqual([25, 25]);
    let most = 0;
    for (let i = 0; i < 20 && held.pending.length > 0; i++) {
      held.answerOne();
      await settleTurns();
      most = Math.max(most, held.pending.length);
      expect(held.pending.reduce((sum, t) => sum + t.count, 0) + consumer!.busy).toBeLessThanOrEqual(50);
    }
    expect(most).toBe(2);
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
