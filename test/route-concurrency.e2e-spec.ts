import { Injectable } from '@nestjs/common';
import { OnTaskEvent, type Task, type TaskEvent } from 'nestjs-distributed-queue';
import { untilAborted, useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('ordered worker concurrency on %s', (_name, target) => {
  const { start } = useQueueApps(target);

  it("bounds an ordered type's handlers at once in one process by its concurrency, over all partitions", async () => {
    const prefix = uniquePrefix('ordered-concurrency');
    let running = 0;
    let most = 0;
    const done = new Map<string, number[]>();
    const W = workerClass('ledger', { ordered: true, concurrency: 4 }, async (task: Task<{ n: number }>) => {
      running++;
      most = Math.max(most, running);
      await sleep(15);
      running--;
      done.set(task.key!, [...(done.get(task.key!) ?? []), task.payload.n]);
    });
    const keys = Array.from({ length: 64 }, (_, i) => `c-${i}`);
    const producer = await start({
      connection: target.connection, keyPrefix: prefix, workers: false, types: { ledger: { ordered: true } },
      route: routeTestOptions('q', 'producer', 16),
    });
    // Everything is queued before the worker starts: every partition has work at once.
    await producer.submit.submitOrderedMany('ledger', keys.flatMap((key) => [0, 1, 2].map((n) => ({ key, payload: { n } }))));
    await start({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions('q', 'solo', 16) }, [W]);
    await waitFor(() => keys.every((k) => done.get(k)?.length === 3), { timeoutMs: 10_000, message: 'every task ran' });
    expect(most).toBe(4);
    for (const k of keys) expect(done.get(k)).toEqual([0, 1, 2]);
  });

  it('an ordered attempt past timeoutMs is aborted with TaskTimeoutError, never early; the retry runs before the key goes on', async () => {
    const prefix = uniquePrefix('ordered-timeout');
    const runs: string[] = [];
    const aborted: string[] = [];
    const failed: TaskEvent[] = [];
    const W = workerClass('ledger', { ordered: true, timeoutMs: 300, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 0 } }, async (task: Task<{ n: number }>, signal) => {
      runs.push(`${task.key}:${task.payload.n}@${task.attempt}`);
      if (task.payload.n !== 0 || task.attempt > 1) return;
      await untilAborted(signal).catch(() => aborted.push((signal.reason as Error).name));
    });
    // NOTE: "never early" is measured by the library's own start of the attempt (the failed event's
    // durationMs), taken before its timeout is armed. A clock read inside the handler comes later by however
    // long the process was descheduled in between, which on a loaded machine is several ms.
    @Injectable()
    class Failures {
      @OnTaskEvent('ledger', ['failed'], { scope: 'local' })
      on(event: TaskEvent): void {
        failed.push(event);
      }
    }
    const app = await start({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions('q', 'solo', 4) }, [W, Failures]);
    await app.submit.submitOrderedMany('ledger', ['a', 'b', 'c'].flatMap((key) => [0, 1].map((n) => ({ key, payload: { n } }))));
    await waitFor(() => runs.length === 9 && failed.length === 3, { timeoutMs: 10_000, message: 'every task ran, the first of each key twice' });
    expect(aborted).toEqual(['TaskTimeoutError', 'TaskTimeoutError', 'TaskTimeoutError']);
    for (const event of failed) {
      expect(event.error?.name).toBe('TaskTimeoutError');
      expect(event.durationMs).toBeGreaterThanOrEqual(300);
      expect(event.durationMs).toBeLessThan(2000);
    }
    for (const key of ['a', 'b', 'c']) expect(runs.filter((r) => r.startsWith(`${key}:`))).toEqual([`${key}:0@1`, `${key}:0@2`, `${key}:1@1`]);
  });

  it('an ordered handler declared without a signal (no abort controller made) is timed out all the same; the key goes on', async () => {
    const prefix = uniquePrefix('ordered-timeout-nosignal');
    const runs: string[] = [];
    const W = workerClass('ledger', { ordered: true, timeoutMs: 200, maxAttempts: 1 }, (task: Task<{ n: number }>) => {
      runs.push(`${task.key}:${task.payload.n}`);
      return task.payload.n === 0 ? new Promise(() => undefined) : undefined;
    });
    const app = await start({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions('q', 'solo', 4) }, [W]);
    await app.submit.submitOrderedMany('ledger', ['a', 'b'].flatMap((key) => [0, 1].map((n) => ({ key, payload: { n } }))));
    await waitFor(() => runs.length === 4, { timeoutMs: 10_000, message: 'the hung first task of each key timed out, the second ran' });
    for (const key of ['a', 'b']) expect(runs.filter((r) => r.startsWith(`${key}:`))).toEqual([`${key}:0`, `${key}:1`]);
    const dead = await app.inspect.listOrderedDead();
    expect(dead.map((t) => `${t.key}:${t.error.name}`).sort()).toEqual(['a:TaskTimeoutError', 'b:TaskTimeoutError']);
  });
});
