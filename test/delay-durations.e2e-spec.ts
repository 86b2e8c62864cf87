import { InvalidOptionsError, type Task } from 'nestjs-distributed-queue';
import { DelayQueueStore } from 'nestjs-distributed-queue/delay/delay-queue.store';
import { redisNow, startQueueApp, useQueueApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

const DAY = 24 * 3600_000;

describe.each(getTargets().map((t) => [t.name, t] as const))('durations past 2^31-1 ms on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.name);
  beforeEach(() => {
    warnings.length = 0;
    process.on('warning', onWarning);
  });
  afterEach(() => {
    process.off('warning', onWarning);
  });

  it('an idle worker waits for a task due in 30 days without a busy loop', async () => {
    const keyPrefix = uniquePrefix('long-delay');
    const W = workerClass('later', { pollIntervalMs: 1000 }, () => undefined);
    const app = await start({ connection: target.connection, keyPrefix }, [W]);
    const store = app.app.get(DelayQueueStore);
    const take = jest.spyOn(store, 'take');
    const id = await app.submit.submit('later', {}, { delay: 30 * DAY });
    await sleep(100);
    take.mockClear();
    await sleep(1500);
    // The safety poll (1 s) and perhaps one wake-up: not hundreds of calls a second.
    expect(take.mock.calls.length).toBeLessThanOrEqual(4);
    expect(warnings).not.toContain('TimeoutOverflowWarning');
    const task = await app.inspect.getTask('later', id);
    expect(task.state).toBe('delayed');
    expect(task.dueAt! - (await redisNow(redis()))).toBeGreaterThan(30 * DAY - 5000);
  });

  it('keeps a task delayed by ten years', async () => {
    const keyPrefix = uniquePrefix('decade');
    const app = await start({ connection: target.connection, keyPrefix, workers: false, types: { decade: {} } });
    const id = await app.submit.submit('decade', { x: 1 }, { delay: 3650 * DAY });
    const task = await app.inspect.getTask('decade', id);
    expect(task.state).toBe('delayed');
    expect(task.dueAt! - (await redisNow(redis()))).toBeGreaterThan(3650 * DAY - 5000);
    expect(await app.submit.reschedule('decade', id, { runAt: new Date(Date.UTC(2100, 0, 1)) })).toBe(true);
  });

  it('a handler timeout of 30 days lets a 100 ms handler finish', async () => {
    const keyPrefix = uniquePrefix('long-timeout');
    const done: number[] = [];
    const W = workerClass('slowish', { timeoutMs: 30 * DAY, maxAttempts: 1 }, async (task: Task) => {
      await sleep(100);
      done.push(task.attempt);
    });
    const app = await start({ connection: target.connection, keyPrefix }, [W]);
    const id = await app.submit.submit('slowish', {});
    await waitFor(async () => (await app.inspect.getState('slowish', id)) === 'done' || (await app.inspect.getState('slowish', id)) === 'dead', { timeoutMs: 5000 });
    expect(await app.inspect.getState('slowish', id)).toBe('done');
    expect(done).toEqual([1]);
    expect(warnings).not.toContain('TimeoutOverflowWarning');
  });

  it('refuses at start-up a repeating interval that Node cannot time, naming the option', async () => {
    const W = workerClass('poll', { pollIntervalMs: 30 * DAY }, () => undefined);
    const attempt = startQueueApp({ connection: target.connection, keyPrefix: uniquePrefix('long-poll') }, [W]);
    await expect(attempt).rejects.toThrow(InvalidOptionsError);
    await expect(attempt).rejects.toThrow(/pollIntervalMs/);
    await expect(
      startQueueApp({ connection: target.connection, keyPrefix: uniquePrefix('long-hb'), route: { qId: 'q', heartbeatMs: 30 * DAY, offlineMs: 31 * DAY, idleMs: 31 * DAY } }),
    ).rejects.toThrow(/route\.heartbeatMs/);
  });
});
