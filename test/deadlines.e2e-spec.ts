/**
 * Deadlines (issue 31, item 6): `expireAt` / `ttlMs` on submit. No attempt of the task starts after its deadline:
 * when a worker would start it, it goes to dead letters with `TaskExpiredError` (a `dead` event, counted dead,
 * a waiter gets TaskDeadError); re-driving it clears the deadline.
 *
 * Failure matrix (single server and cluster):
 * | cell | expected |
 * | --- | --- |
 * | due now, no worker until past its ttlMs | dead, TaskExpiredError; its handler never ran; a fleet `dead` event; counts dead 1 |
 * | a deadline not reached | it runs; getTask shows expireAt |
 * | delayed with expireAt after runAt; the type paused past the deadline | dead, TaskExpiredError |
 * | attempt 1 fails, its retry falls due after the deadline | dead, TaskExpiredError, attempts 1 (no second attempt) |
 * | with a priority; in a group | the same (the turn queue's and the groups' paths) |
 * | a waiter | TaskDeadError naming TaskExpiredError |
 * | re-driven | it runs |
 * | 20,000 expired tasks in a backlog | every one dead, none ran (takes bury them in bounded batches) |
 * | bad input: both options; expireAt not after runAt; ttlMs not above delay; bad values | InvalidSubmitOptionsError naming the option, nothing written |
 */
import { Injectable } from '@nestjs/common';
import { InvalidSubmitOptionsError, OnTaskEvent, TaskDeadError, type Task, type TaskEvent } from 'nestjs-distributed-queue';
import { startQueueApp, useAppsAndChildren, workerClass, type QueueApp } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

const ran: string[] = [];
const deadEvents: TaskEvent[] = [];

@Injectable()
class DeadListener {
  @OnTaskEvent('dl', 'dead', { scope: 'fleet' })
  on(event: TaskEvent): void {
    deadEvents.push(event);
  }
}

const Worker = workerClass<{ fail?: boolean }>('dl', { concurrency: 8, maxAttempts: 3, backoff: { type: 'fixed', delayMs: 600, jitter: 0 }, pollIntervalMs: 100 }, (task: Task<{ fail?: boolean }>) => {
  ran.push(task.id);
  if (task.payload.fail) throw new Error('first attempt fails');
});

describe.each(getTargets().map((t) => [t.name, t] as const))('deadlines on %s', (_name, target) => {
  const apps = useAppsAndChildren();
  afterEach(() => {
    ran.length = 0;
    deadEvents.length = 0;
  });

  async function producer(prefix: string): Promise<QueueApp> {
    const app = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: { dl: {} } });
    apps.push(app);
    return app;
  }
  async function workers(prefix: string): Promise<QueueApp> {
    const app = await startQueueApp({ connection: target.connection, keyPrefix: prefix }, [Worker, DeadListener]);
    apps.push(app);
    return app;
  }
  const lastError = async (app: QueueApp, id: string) => (await app.inspect.getTask('dl', id)).lastError;

  it('a task not started by its deadline never runs: dead with TaskExpiredError, a dead event, counted', async () => {
    const prefix = uniquePrefix('dl-ttl');
    const p = await producer(prefix);
    await p.submit.submit('dl', {}, { id: 'late', ttlMs: 200 });
    await p.submit.submit('dl', {}, { id: 'fine', ttlMs: 60_000 });
    expect((await p.inspect.getTask('dl', 'fine')).expireAt).toBeGreaterThan(Date.now() + 50_000);
    await sleep(400);
    const w = await workers(prefix);
    await waitFor(() => ran.includes('fine'), { timeoutMs: 10_000 });
    await waitFor(async () => (await w.inspect.getState('dl', 'late')) === 'dead', { timeoutMs: 10_000 });
    expect(ran).toEqual(['fine']);
    expect(await lastError(w, 'late')).toMatchObject({ name: 'TaskExpiredError', message: expect.stringContaining('deadline') });
    expect((await w.inspect.getCounts('dl')).dead).toBe(1);
    await waitFor(() => deadEvents.some((e) => e.task.id === 'late'), { timeoutMs: 10_000, message: 'the dead event' });
    expect(deadEvents.find((e) => e.task.id === 'late')?.error).toMatchObject({ name: 'TaskExpiredError' });
  });

  it('delayed with expireAt after runAt, the type paused past it; a retry due after it; with a priority; in a group: each ends expired', async () => {
    const prefix = uniquePrefix('dl-paths');
    const w = await workers(prefix);
    await w.control.pause('dl');
    const now = Date.now();
    await w.submit.submit('dl', {}, { id: 'delayed', runAt: now + 100, expireAt: now + 400 });
    await w.submit.submit('dl', {}, { id: 'prio', priority: 5, ttlMs: 300 });
    await w.submit.submit('dl', {}, { id: 'grouped', group: 'tenant-a', ttlMs: 300 });
    await sleep(700);
    await w.control.resume('dl');
    for (const id of ['delayed', 'prio', 'grouped']) {
      await waitFor(async () => (await w.inspect.getState('dl', id)) === 'dead', { timeoutMs: 10_000, message: `${id} dead` });
      expect(await lastError(w, id)).toMatchObject({ name: 'TaskExpiredError' });
    }
    // A retry due after the deadline: attempt 1 ran, no attempt 2.
    await w.submit.submit('dl', { fail: true }, { id: 'retried', ttlMs: 400 });
    await waitFor(async () => (await w.inspect.getState('dl', 'retried')) === 'dead', { timeoutMs: 10_000 });
    expect(ran.filter((id) => id === 'retried')).toHaveLength(1);
    expect(await lastError(w, 'retried')).toMatchObject({ name: 'TaskExpiredError' });
    expect(ran.filter((id) => id !== 'retried')).toEqual([]);
  });

  it('a waiter gets TaskDeadError naming TaskExpiredError; a re-drive clears the deadline and the task runs', async () => {
    const prefix = uniquePrefix('dl-wait');
    const w = await workers(prefix);
    await w.control.pause('dl');
    const waiting = w.submit.submitAndWait('dl', {}, { id: 'w1', ttlMs: 200 }).catch((e: unknown) => e);
    await sleep(400);
    await w.control.resume('dl');
    const error = await waiting;
    expect(error).toBeInstanceOf(TaskDeadError);
    expect(error).toMatchObject({ error: { name: 'TaskExpiredError' } });
    expect(await w.inspect.redriveDead('dl', ['w1'])).toBe(1);
    await waitFor(() => ran.includes('w1'), { timeoutMs: 10_000 });
    // (its handler started; its ack follows)
    await waitFor(async () => (await w.inspect.getState('dl', 'w1')) === 'done', { timeoutMs: 10_000, message: 'w1 done' });
  });

  it('20,000 expired tasks in a backlog: every one dead, none ran', async () => {
    const prefix = uniquePrefix('dl-many');
    const p = await producer(prefix);
    const n = 20_000;
    for (let i = 0; i < n; i += 1000) {
      await p.submit.submitMany('dl', Array.from({ length: 1000 }, (_, j) => ({ id: `m${i + j}`, payload: {}, ttlMs: 100 })));
    }
    await sleep(300);
    const w = await workers(prefix);
    await waitFor(async () => (await w.inspect.getCounts('dl')).dead === n, { timeoutMs: 60_000, message: 'all dead' });
    expect(ran).toEqual([]);
    expect(await w.inspect.getCounts('dl')).toMatchObject({ ready: 0, delayed: 0, running: 0 });
  }, 90_000);

  it('refuses bad deadlines, naming the option, and writes nothing', async () => {
    const p = await producer(uniquePrefix('dl-bad'));
    const now = Date.now();
    const cases: [object, string][] = [
      [{ expireAt: now + 1000, ttlMs: 1000 }, 'ttlMs'],
      [{ runAt: now + 1000, expireAt: now + 500 }, 'expireAt'],
      [{ runAt: now + 1000, expireAt: now + 1000 }, 'expireAt'],
      [{ delay: 1000, ttlMs: 1000 }, 'ttlMs'],
      [{ ttlMs: 0 }, 'ttlMs'],
      [{ ttlMs: -5 }, 'ttlMs'],
      [{ ttlMs: '1000' }, 'ttlMs'],
      [{ ttlMs: Infinity }, 'ttlMs'],
      [{ expireAt: 'tomorrow' }, 'expireAt'],
      [{ expireAt: new Date('x') }, 'expireAt'],
    ];
    for (const [options, option] of cases) {
      const error = await p.submit.submit('dl', {}, { id: 'bad', ...(options as object) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidSubmitOptionsError);
      expect((error as Error).message).toContain(option);
    }
    expect(await p.inspect.getState('dl', 'bad')).toBe('unknown');
  });
});
