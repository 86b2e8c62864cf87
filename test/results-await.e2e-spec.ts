/**
 * Results and awaiting (issue 31, items 1 and 4): a delay-queue handler's return value is kept with its finished
 * task (while the task is among the type's last `keepDone`), shown by `getTask` and carried by `completed`
 * events; `submitAndWait` / `waitFor` resolve with it, or reject with the task's end.
 *
 * Failure matrix (single server and cluster unless marked):
 * | cell | expected |
 * | --- | --- |
 * | a result kept | getTask shows it; the local and the fleet `completed` event carry it |
 * | keepDone 3 and 10 tasks with results | the results hash holds 3: results leave with their ids |
 * | a result over maxResultBytes; one that is not JSON (BigInt) | the task completes; getTask `resultNotKept` (bytes, -1); a waiter gets ResultNotKeptError |
 * | an id finished again without a result | getTask shows none (not the earlier run's) |
 * | obliterate | the results go with the type |
 * | submitAndWait: 200 at once from one app, the workers in another | each resolves with its own task's result |
 * | the task dies / is cancelled waiting / is cancelled running | TaskDeadError with its last error / TaskCancelledError / TaskCancelledError |
 * | waitFor a done task; an unknown id | the result at once; TaskNotFoundError |
 * | timeoutMs passes; the signal aborts; bad options; an ordered type | WaitTimeoutError; the signal's reason; InvalidArgumentError and nothing submitted; InvalidSubmitOptionsError |
 * | nobody waits | no flag key, no PUBLISH on the waiters' channel (MONITOR) |
 * | the README example | it compiles and runs: the total comes back from the worker; waitFor of that task answers it too |
 * | (single) Redis restarted (AOF) while a waiter waits | the waiter resolves once the task completes after the restart |
 * | (single) the worker SIGKILLed after its handler returned, before its ack reached Redis (a proxy silenced) | the task runs again on another worker; the waiter resolves once, with the second run's result |
 */
import { Injectable } from '@nestjs/common';
import {
  InvalidArgumentError, InvalidSubmitOptionsError, OnTaskEvent, ResultNotKeptError, TaskCancelledError, TaskDeadError, TaskNotFoundError,
  WaitTimeoutError, type Task, type TaskEvent,
} from 'nestjs-distributed-queue';
import { waitersChannel } from 'nestjs-distributed-queue/delay/task-waiters';
import { Invoices, RenderInvoiceWorker } from './fixtures/results-readme';
import { spawnChild } from './support/child';
import { keysOf, startQueueApp, useAppsAndChildren, useQueueApps, workerClass, type QueueApp } from './support/queue-app';
import { startRedisServer } from './support/redis-server';
import { monitorCalls } from './support/redis-stats';
import { routeTestOptions } from './support/route';
import { startTcpProxy } from './support/tcp-proxy';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

interface Job {
  ret?: unknown;
  fail?: boolean;
  hold?: boolean;
  big?: boolean;
  bigint?: boolean;
}

const fleetCompleted: TaskEvent[] = [];
const localCompleted: TaskEvent[] = [];

@Injectable()
class Listeners {
  @OnTaskEvent('rw', 'completed', { scope: 'fleet' })
  fleet(event: TaskEvent): void {
    fleetCompleted.push(event);
  }

  @OnTaskEvent('rw', 'completed')
  local(event: TaskEvent): void {
    localCompleted.push(event);
  }
}

const Worker = workerClass<Job>('rw', { concurrency: 32, maxAttempts: 1, pollIntervalMs: 200 }, async (task: Task<Job>, signal: AbortSignal) => {
  const job = task.payload;
  if (job.fail) throw new Error(`boom ${task.id}`);
  if (job.hold) await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
  if (job.big) return 'x'.repeat(2000);
  if (job.bigint) return 10n;
  return job.ret;
});

describe.each(getTargets().map((t) => [t.name, t] as const))('results and awaiting on %s', (_name, target) => {
  const apps = useAppsAndChildren();
  const { redis } = useQueueApps(target);
  afterEach(() => {
    fleetCompleted.length = 0;
    localCompleted.length = 0;
  });

  async function start(prefix: string, extra: Record<string, unknown> = {}, workers = true): Promise<QueueApp> {
    const app = await startQueueApp({ connection: target.connection, keyPrefix: prefix, maxResultBytes: 1000, types: { rw: {} }, ...extra }, workers ? [Worker, Listeners] : []);
    apps.push(app);
    return app;
  }

  it('keeps a result: getTask shows it, the local and fleet completed events carry it', async () => {
    const app = await start(uniquePrefix('rw-kept'));
    const id = await app.submit.submit('rw', { ret: { total: 42, items: ['a'] } });
    await waitFor(async () => (await app.inspect.getState('rw', id)) === 'done', { timeoutMs: 10_000 });
    expect(await app.inspect.getTask('rw', id)).toMatchObject({ state: 'done', result: { total: 42, items: ['a'] } });
    await waitFor(() => fleetCompleted.some((e) => e.task.id === id), { timeoutMs: 10_000, message: 'the fleet event' });
    expect(fleetCompleted.find((e) => e.task.id === id)?.result).toEqual({ total: 42, items: ['a'] });
    expect(localCompleted.find((e) => e.task.id === id)?.result).toEqual({ total: 42, items: ['a'] });
  });

  it('keeps results while their ids are among the last keepDone; a rerun without a result shows none; obliterate removes them', async () => {
    const prefix = uniquePrefix('rw-keep');
    const app = await start(prefix, { keepDone: 3 });
    const ids = [];
    for (let i = 0; i < 10; i++) ids.push(await app.submit.submit('rw', { ret: i }, { id: `t${i}` }));
    await waitFor(async () => (await app.inspect.getState('rw', 't9')) === 'done' && (await redis().llen(keysOf(prefix, 'rw').done)) === 3, { timeoutMs: 10_000 });
    await waitFor(async () => (await redis().hlen(keysOf(prefix, 'rw').results)) === 3, { timeoutMs: 5000, message: 'results trimmed with done' });
    expect((await app.inspect.getTask('rw', 't9')).result).toBe(9);
    await app.submit.submit('rw', {}, { id: 't9' });
    await waitFor(async () => (await redis().lindex(keysOf(prefix, 'rw').done, 0)) === 't9' && (await redis().llen(keysOf(prefix, 'rw').done)) === 3, { timeoutMs: 10_000 });
    expect((await app.inspect.getTask('rw', 't9')).result).toBeUndefined();
    await app.control.obliterate('rw', { force: true });
    expect(await redis().exists(keysOf(prefix, 'rw').results)).toBe(0);
  });

  it('keepDone lowered between deployments (5,000 to 10): the results of the ids that leave go with them, a bounded batch a call, none left over', async () => {
    const prefix = uniquePrefix('rw-lowered');
    const k = keysOf(prefix, 'rw');
    const before = await start(prefix, { keepDone: 5000 });
    for (let i = 0; i < 5000; i += 1000) await before.submit.submitMany('rw', Array.from({ length: 1000 }, (_, j) => ({ id: `o${i + j}`, payload: { ret: i + j } })));
    await waitFor(async () => (await redis().hlen(k.results)) === 5000, { timeoutMs: 30_000, message: '5,000 results kept' });
    await before.close();
    const after = await start(prefix, { keepDone: 10 });
    // each ack drains at most its own ids and 1,000 more: ten acks of one task leave 5,000 + 10 - 10 x 1,001 < 10
    for (let i = 0; i < 10; i++) {
      await after.submit.submit('rw', { ret: `n${i}` }, { id: `n${i}` });
      await waitFor(async () => (await after.inspect.getState('rw', `n${i}`)) === 'done', { timeoutMs: 10_000 });
    }
    expect(await redis().llen(k.done)).toBe(10);
    expect(await redis().hlen(k.results)).toBe(10);
    expect((await after.inspect.getTask('rw', 'n9')).result).toBe('n9');
    expect((await after.inspect.getTask('rw', 'o4999')).state).toBe('unknown');
  });

  it('keepDone lowered to 0: the ids kept before leave with their results over the next acks, none left over', async () => {
    const prefix = uniquePrefix('rw-none');
    const k = keysOf(prefix, 'rw');
    const before = await start(prefix, { keepDone: 2000 });
    await before.submit.submitMany('rw', Array.from({ length: 2000 }, (_, i) => ({ id: `o${i}`, payload: { ret: i } })));
    await waitFor(async () => (await redis().hlen(k.results)) === 2000, { timeoutMs: 30_000, message: '2,000 results kept' });
    await before.close();
    const after = await start(prefix, { keepDone: 0 });
    for (let i = 0; i < 3; i++) {
      await after.submit.submit('rw', { ret: i }, { id: `n${i}` });
      await waitFor(async () => (await after.inspect.getState('rw', `n${i}`)) !== 'ready' && (await after.inspect.getState('rw', `n${i}`)) !== 'running', { timeoutMs: 10_000 });
    }
    await waitFor(async () => (await redis().exists(k.done, k.results)) === 0, { timeoutMs: 10_000, message: 'nothing kept' });
    expect((await after.inspect.getTask('rw', 'o0')).state).toBe('unknown');
  });

  it('a result over maxResultBytes or not JSON is not kept: the task completes, readers are told', async () => {
    const app = await start(uniquePrefix('rw-big'));
    const big = app.submit.submitAndWait('rw', { big: true }).catch((e: unknown) => e);
    expect(await big).toBeInstanceOf(ResultNotKeptError);
    expect(await big).toMatchObject({ bytes: 2002 });
    const id = await app.submit.submit('rw', { bigint: true });
    await waitFor(async () => (await app.inspect.getState('rw', id)) === 'done', { timeoutMs: 10_000 });
    const info = await app.inspect.getTask('rw', id);
    expect(info.resultNotKept).toBe(-1);
    expect(info.result).toBeUndefined();
    expect(await app.submit.waitFor('rw', id).catch((e: unknown) => e)).toMatchObject({ name: 'ResultNotKeptError', bytes: -1 });
  });

  it('submitAndWait: 200 at once from a producer-only app resolve with their own results', async () => {
    const prefix = uniquePrefix('rw-many');
    await start(prefix);
    const producer = await start(prefix, { workers: false }, false);
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => producer.submit.submitAndWait('rw', { ret: { i } })));
    expect(results).toEqual(Array.from({ length: 200 }, (_, i) => ({ i })));
    // The id of a task still waiting is not submitted again: that task is waited for.
    // NOTE: the first is written before the second is sent (a sleep of 50 ms could end before it on a loaded
    // machine), and due 1 s later: it is still waiting when the second comes
    const first = producer.submit.submitAndWait('rw', { ret: 'first' }, { id: 'same', delay: 1000 });
    await waitFor(async () => (await producer.inspect.getState('rw', 'same')) === 'delayed', { timeoutMs: 5000, intervalMs: 5, message: 'the first submitted' });
    expect(await producer.submit.submitAndWait('rw', { ret: 'second' }, { id: 'same' })).toBe('first');
    expect(await first).toBe('first');
  }, 30_000);

  it('rejects with the task end: dead (its last error), cancelled waiting, cancelled running', async () => {
    const app = await start(uniquePrefix('rw-end'));
    const dead = await app.submit.submitAndWait('rw', { fail: true }, { id: 'd1' }).catch((e: unknown) => e);
    expect(dead).toBeInstanceOf(TaskDeadError);
    expect(dead).toMatchObject({ id: 'd1', error: { name: 'Error', message: 'boom d1', attempts: 1 } });
    const waiting = app.submit.submitAndWait('rw', {}, { id: 'c1', delay: 60_000 }).catch((e: unknown) => e);
    await waitFor(async () => (await app.inspect.getState('rw', 'c1')) === 'delayed', { timeoutMs: 5000 });
    await app.submit.cancel('rw', 'c1');
    expect(await waiting).toBeInstanceOf(TaskCancelledError);
    const running = app.submit.submitAndWait('rw', { hold: true }, { id: 'c2' }).catch((e: unknown) => e);
    await waitFor(async () => (await app.inspect.getState('rw', 'c2')) === 'running', { timeoutMs: 5000 });
    await app.submit.cancel('rw', 'c2');
    expect(await running).toBeInstanceOf(TaskCancelledError);
    // waitFor after the fact: dead is told from its state; a cancelled task is gone.
    expect(await app.submit.waitFor('rw', 'd1').catch((e: unknown) => e)).toBeInstanceOf(TaskDeadError);
    expect(await app.submit.waitFor('rw', 'c1').catch((e: unknown) => e)).toBeInstanceOf(TaskNotFoundError);
  });

  it('waitFor a done task answers at once; an unknown id is TaskNotFoundError', async () => {
    const app = await start(uniquePrefix('rw-waitfor'));
    const id = await app.submit.submit('rw', { ret: 'ok' });
    await waitFor(async () => (await app.inspect.getState('rw', id)) === 'done', { timeoutMs: 10_000 });
    expect(await app.submit.waitFor('rw', id)).toBe('ok');
    expect(await app.submit.waitFor('rw', 'nope').catch((e: unknown) => e)).toBeInstanceOf(TaskNotFoundError);
  });

  it('gives up on timeoutMs and on an abort (the task goes on); refuses bad options and ordered types, submitting nothing', async () => {
    const prefix = uniquePrefix('rw-give-up');
    const app = await start(prefix, { route: routeTestOptions(prefix, 'm1', 1), types: { rw: {}, 'rw.o': { ordered: true } } });
    const timedOut = await app.submit.submitAndWait('rw', {}, { id: 'late', delay: 60_000, timeoutMs: 200 }).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(WaitTimeoutError);
    expect(await app.inspect.getState('rw', 'late')).toBe('delayed');
    const controller = new AbortController();
    const aborted = app.submit.waitFor('rw', 'late', { signal: controller.signal }).catch((e: unknown) => e);
    controller.abort(new Error('no longer needed'));
    expect(await aborted).toMatchObject({ message: 'no longer needed' });
    for (const bad of [{ timeoutMs: 0 }, { timeoutMs: 1.5 }, { timeoutMs: 'x' }, { signal: 'x' }]) {
      expect(await app.submit.submitAndWait('rw', {}, { id: 'bad', ...(bad as object) }).catch((e: unknown) => e)).toBeInstanceOf(InvalidArgumentError);
    }
    expect(await app.inspect.getState('rw', 'bad')).toBe('unknown');
    expect(await app.submit.submitAndWait('rw.o', {}).catch((e: unknown) => e)).toBeInstanceOf(InvalidSubmitOptionsError);
  });

  it('the README example runs: submitAndWait answers the total, waitFor of that task too', async () => {
    const prefix = uniquePrefix('rw-readme');
    const app = await startQueueApp({ connection: target.connection, keyPrefix: prefix }, [RenderInvoiceWorker, Invoices]);
    apps.push(app);
    const invoices = app.app.get(Invoices);
    expect(await invoices.total('o-1')).toBe(1250);
    const id = await app.submit.submit('invoice.render', { orderId: 'o-2' });
    expect(await invoices.totalOf(id)).toBe(1250);
  });

  it('costs nothing when nobody waits: no flag, no publish on the waiters channel', async () => {
    const prefix = uniquePrefix('rw-quiet');
    const app = await start(prefix);
    const ports = serverPorts(target);
    const publishes = await monitorCalls(ports, 'PUBLISH', waitersChannel(prefix, 'rw'));
    const ids = await Promise.all(Array.from({ length: 50 }, (_, i) => app.submit.submit('rw', { ret: i })));
    await waitFor(async () => (await app.inspect.getState('rw', ids[49])) === 'done', { timeoutMs: 10_000 });
    expect(await publishes.stop()).toBe(0);
    expect(await redis().exists(keysOf(prefix, 'rw').awaited)).toBe(0);
  });
});

function serverPorts(target: RedisTarget): number[] {
  return typeof target.connection === 'string' ? [Number(new URL(target.connection).port)] : target.connection.cluster.map((n) => n.port);
}

describe('results and awaiting through failures (single server)', () => {
  const apps = useAppsAndChildren();

  it('Redis restarted while a waiter waits: it resolves once the task completes after the restart', async () => {
    const server = await startRedisServer({ extraArgs: ['--appendonly', 'yes', '--appendfsync', 'always'] });
    try {
      const prefix = uniquePrefix('rw-restart');
      const producer = await startQueueApp({ connection: server.url, keyPrefix: prefix, types: { rw: {} }, redisTimeoutMs: 3000 });
      apps.push(producer);
      const waiting = producer.submit.submitAndWait('rw', { ret: 'after' }, { id: 'r1', timeoutMs: 30_000 });
      await sleep(300);
      await server.restart();
      await sleep(500);
      const worker = await startQueueApp({ connection: server.url, keyPrefix: prefix }, [Worker]);
      apps.push(worker);
      expect(await waiting).toBe('after');
    } finally {
      await server.remove();
    }
  }, 60_000);

  it('a worker SIGKILLed after its handler returned, before its ack reached Redis: the waiter gets the second run\'s result, once', async () => {
    const target = getTargets().find((t) => t.name === 'single');
    if (!target || typeof target.connection !== 'string') return;
    const prefix = uniquePrefix('rw-crash');
    const proxy = await startTcpProxy({ port: Number(new URL(target.connection).port) });
    try {
      const env = { DQ_PREFIX: prefix, DQ_TYPE: 'rw', DQ_VISIBILITY_MS: '1500', DQ_RESULT: '1' };
      const first = spawnChild('test/fixtures/worker-app.ts', { ...env, DQ_CONNECTION: JSON.stringify(`redis://127.0.0.1:${proxy.port}`), DQ_RETURN_DELAY_MS: '400' });
      await first.waitForMessage((m) => m.type === 'ready', 60_000);
      const producer = await startQueueApp({ connection: target.connection, keyPrefix: prefix, types: { rw: {} } });
      apps.push(producer);
      const settled: unknown[] = [];
      const waiting = producer.submit.submitAndWait('rw', {}, { id: 'k1', timeoutMs: 40_000 }).then((r) => settled.push(r), (e: unknown) => settled.push(e));
      await first.waitForMessage((m) => m.type === 'returning', 20_000);
      proxy.stall(true); // its ack never reaches Redis
      await sleep(1000);
      first.kill('SIGKILL');
      const second = spawnChild('test/fixtures/worker-app.ts', { ...env, DQ_CONNECTION: JSON.stringify(target.connection) });
      await second.waitForMessage((m) => m.type === 'done' && m.id === 'k1', 30_000);
      await waiting;
      await sleep(500);
      expect(settled).toEqual([{ attempt: 2, pid: second.pid }]);
      expect((await producer.inspect.getTask('rw', 'k1')).result).toEqual({ attempt: 2, pid: second.pid });
    } finally {
      await proxy.close();
    }
  }, 90_000);
});
