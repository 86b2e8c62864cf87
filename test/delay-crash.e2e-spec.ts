import { Cluster, Redis } from 'ioredis';
import type { Task } from 'nestjs-distributed-queue';
import { spawnChild, type ChildHandle } from './support/child';
import { connect, startQueueApp, useAppsAndChildren, workerClass } from './support/queue-app';
import { startRedisServer } from './support/redis-server';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { waitFor } from './support/wait';

const FIXTURE = 'test/fixtures/worker-app.ts';

interface Report {
  type: 'start' | 'done';
  id: string;
  attempt: number;
}

function startWorkerChild(target: RedisTarget, prefix: string, type: string, env: Record<string, string>): ChildHandle {
  return spawnChild(FIXTURE, { DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: type, ...env });
}

const reports = (child: ChildHandle, kind: Report['type']): Report[] => child.messages.filter((m: Report) => m.type === kind);

describe.each(getTargets().map((t) => [t.name, t] as const))('delay queue under failure on %s', (_name, target) => {
  const apps = useAppsAndChildren();

  it('runs the tasks of a worker killed with SIGKILL again elsewhere; nothing lost', async () => {
    const prefix = uniquePrefix('sigkill');
    const producer = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: { crash: {} } });
    apps.push(producer);
    const ids = (await producer.submit.submitMany('crash', Array.from({ length: 12 }, (_, i) => ({ id: `t${i}`, payload: i })))).map((r) => r.id);
    const a = startWorkerChild(target, prefix, 'crash', { DQ_HOLD_MS: '400', DQ_CONCURRENCY: '2', DQ_VISIBILITY_MS: '1000' });
    await a.waitForMessage((m) => m.type === 'start' && reports(a, 'done').length >= 2, 20_000);
    await waitFor(() => reports(a, 'start').length - reports(a, 'done').length === 2, { timeoutMs: 2000, intervalMs: 2 });
    a.kill('SIGKILL');
    expect((await a.exited).signal).toBe('SIGKILL');
    const doneByA = new Set(reports(a, 'done').map((r) => r.id));
    const inFlight = reports(a, 'start').map((r) => r.id).filter((id) => !doneByA.has(id));
    expect(inFlight).toHaveLength(2);

    const b = startWorkerChild(target, prefix, 'crash', { DQ_HOLD_MS: '5', DQ_CONCURRENCY: '4', DQ_VISIBILITY_MS: '1000' });
    await waitFor(() => doneByA.size + reports(b, 'done').length >= ids.length, { timeoutMs: 20_000, message: 'every task done' });
    const doneByB = reports(b, 'done');
    const all = [...doneByA, ...doneByB.map((r) => r.id)].sort();
    expect(all).toEqual([...ids].sort());
    for (const id of inFlight) expect(doneByB.find((r) => r.id === id)?.attempt).toBe(2);
    // A finished task is acked up to ACK_DELAY_MS later (with the next take): its state follows its handler.
    const allDone = async () => (await Promise.all(ids.map((id) => producer.inspect.getState('crash', id)))).every((state) => state === 'done');
    await waitFor(allDone, { timeoutMs: 5000, message: 'every task recorded done' });
  });

  it('on SIGTERM finishes in-flight tasks within the shutdown timeout', async () => {
    const prefix = uniquePrefix('drain');
    const producer = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: { drain: {} } });
    apps.push(producer);
    const child = startWorkerChild(target, prefix, 'drain', { DQ_HOLD_MS: '500', DQ_CONCURRENCY: '3', DQ_SHUTDOWN_MS: '5000' });
    await child.waitForMessage((m) => m.type === 'ready', 20_000);
    await producer.submit.submitMany('drain', [{ id: 'a', payload: 1 }, { id: 'b', payload: 2 }, { id: 'c', payload: 3 }, { id: 'd', payload: 4 }]);
    await waitFor(() => reports(child, 'start').length === 3, { timeoutMs: 5000 });
    child.kill('SIGTERM');
    await child.exited;
    const started = reports(child, 'start').map((r) => r.id).sort();
    expect(started).toHaveLength(3);
    expect(reports(child, 'done').map((r) => r.id).sort()).toEqual(started);
    for (const id of started) expect(await producer.inspect.getState('drain', id)).toBe('done');
    const notStarted = ['a', 'b', 'c', 'd'].filter((id) => !started.includes(id));
    expect(await producer.inspect.getState('drain', notStarted[0])).toBe('ready');
  });

  it('on SIGTERM hands back unfinished tasks without counting an attempt; a restarted app resumes them', async () => {
    const prefix = uniquePrefix('handback');
    const producer = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: { hb: {} } });
    apps.push(producer);
    const first = startWorkerChild(target, prefix, 'hb', { DQ_HOLD_MS: '60000', DQ_CONCURRENCY: '2', DQ_SHUTDOWN_MS: '200' });
    await first.waitForMessage((m) => m.type === 'ready', 20_000);
    await producer.submit.submitMany('hb', [{ id: 'x', payload: 1 }, { id: 'y', payload: 2 }]);
    await waitFor(() => reports(first, 'start').length === 2, { timeoutMs: 5000 });
    const killedAt = Date.now();
    first.kill('SIGTERM');
    await first.exited;
    expect(Date.now() - killedAt).toBeLessThan(5000);
    for (const id of ['x', 'y']) {
      expect(await producer.inspect.getTask('hb', id)).toMatchObject({ state: 'ready', attempts: 0 });
    }
    const second = startWorkerChild(target, prefix, 'hb', { DQ_HOLD_MS: '5', DQ_CONCURRENCY: '2' });
    await waitFor(() => reports(second, 'done').length === 2, { timeoutMs: 20_000 });
    expect(reports(second, 'done').map((r) => r.attempt)).toEqual([1, 1]);
  });

  it('resumes by itself after CLIENT KILL of every connection of the worker', async () => {
    const prefix = uniquePrefix('clientkill');
    const ran: string[] = [];
    const W = workerClass('ck', { pollIntervalMs: 200 }, (task: Task) => {
      ran.push(task.id);
    });
    const app = await startQueueApp({ connection: target.connection, keyPrefix: prefix }, [W]);
    apps.push(app);
    const admin = connect(target);
    try {
      await admin.ping();
      const nodes = admin instanceof Cluster ? admin.nodes('master') : [admin as Redis];
      for (let round = 0; round < 2; round++) {
        let killed = 0;
        for (const node of nodes) {
          const list = (await node.client('LIST')) as string;
          for (const line of list.split('\n')) {
            const id = /(?:^| )id=(\d+) /.exec(line)?.[1];
            if (id && line.includes(` name=dq:${prefix}:`)) killed += Number(await node.client('KILL', 'ID', id));
          }
        }
        expect(killed).toBeGreaterThanOrEqual(round === 0 ? 2 : 1);
        const id = await waitFor(() => app.submit.submit('ck', { round }).catch(() => null), { timeoutMs: 5000 });
        await waitFor(() => ran.includes(id), { timeoutMs: 5000, message: `task submitted after CLIENT KILL round ${round} ran` });
      }
    } finally {
      admin.disconnect();
    }
  });
});

describe('delay queue across a redis-server restart', () => {
  it('keeps delayed tasks (AOF) and resumes work by itself', async () => {
    const server = await startRedisServer({ appendonly: true });
    const ran: string[] = [];
    const W = workerClass('rs', { pollIntervalMs: 200 }, (task: Task) => {
      ran.push(task.id);
    });
    const app = await startQueueApp({ connection: server.url, keyPrefix: uniquePrefix('restart') }, [W]);
    try {
      await app.submit.submitMany('rs', ['a', 'b', 'c'].map((id) => ({ id, payload: id, delay: 1500 })));
      await server.stop();
      await server.restart();
      await waitFor(() => ran.length === 3, { timeoutMs: 10_000, message: 'delayed tasks ran after the restart' });
      expect([...ran].sort()).toEqual(['a', 'b', 'c']);
      const id = await app.submit.submit('rs', 'after');
      await waitFor(() => ran.includes(id), { timeoutMs: 5000 });
    } finally {
      await app.close();
      await server.remove();
    }
  });
});
