import { existsSync, mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Injectable } from '@nestjs/common';
import { OnTaskEvent, TaskInspectorService, type TaskEvent } from 'nestjs-distributed-queue';
import { killAllChildren, spawnChild } from './support/child';
import { useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

/*
 * When local lifecycle events are emitted: only once Redis has the state change they announce (acks are
 * batched for up to ACK_DELAY_MS, and the event waits for the reply of the call that carried the ack).
 * Failure matrix covered:
 *  - a listener reading the state it was told of (delay queue: done / dead; route queue: out of flight /
 *    in dead letters), many tasks, several in flight at once;
 *  - crash between the handler's end and the ack's write: the process SIGKILLs itself inside its
 *    `completed` listener; Redis must already hold the completion (delay queue and route queue);
 *  - single server and cluster (both targets).
 * Not covered here: a lost ack reply (the event is then not emitted: at most once, README).
 */

/** Reads, in each listener call, what Redis says of the task the event names. */
function stateReader(type: string, read: (inspect: TaskInspectorService, event: TaskEvent) => Promise<string>) {
  const seen: { event: string; id: string; state: string }[] = [];
  @Injectable()
  class StateReader {
    constructor(private readonly inspect: TaskInspectorService) {}

    @OnTaskEvent(type, ['completed', 'dead'])
    async on(event: TaskEvent): Promise<void> {
      seen.push({ event: event.event, id: event.task.id, state: await read(this.inspect, event) });
    }
  }
  return { StateReader, seen };
}

describe.each(getTargets().map((t) => [t.name, t] as const))('when local events are emitted, on %s', (_name, target) => {
  const { start } = useQueueApps(target);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'dq-announce-'));
  });
  afterEach(() => {
    killAllChildren();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delay queue: a listener of completed reads the task done, one of dead reads it dead (never running)', async () => {
    const { StateReader, seen } = stateReader('et', (inspect, { task }) => inspect.getState('et', task.id));
    const W = workerClass<{ fail: boolean }>('et', { concurrency: 4, maxAttempts: 1 }, (task) => {
      if (task.payload.fail) throw new Error('no');
    });
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('ev-timing'), events: { stream: false } }, [W, StateReader]);
    const tasks = Array.from({ length: 40 }, (_, i) => ({ id: `t${i}`, payload: { fail: i % 10 === 3 } }));
    await app.submit.submitMany('et', tasks);
    await waitFor(() => seen.length === tasks.length, { timeoutMs: 15_000, message: 'every event read back' });
    const wrong = seen.filter((s) => s.state !== (s.event === 'completed' ? 'done' : 'dead'));
    expect(wrong).toEqual([]);
    expect(seen.filter((s) => s.event === 'dead').map((s) => s.id).sort()).toEqual(['t13', 't23', 't3', 't33']);
  });

  it('route queue: a listener of completed reads the task out of flight, one of dead reads it in dead letters', async () => {
    const { StateReader, seen } = stateReader('eo', async (inspect, { task, event }) => {
      const list = await inspect.listTasks('eo', event === 'completed' ? 'running' : 'dead', { limit: 1000 });
      return list.some((t) => t.id === task.id) ? 'listed' : 'not listed';
    });
    // NOTE: each handler ends on a timer of its own, while the next one of its key starts: the batch runs on
    // and the finished task's ack waits (up to ACK_DELAY_MS) to go out with others.
    const W = workerClass<{ fail: boolean }>('eo', { ordered: true, maxAttempts: 1 }, async (task) => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      if (task.payload.fail) throw new Error('no');
    });
    const route = routeTestOptions('evt', 'm1', 2);
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('ev-timing-ord'), route, events: { stream: false } }, [W, StateReader]);
    const items = Array.from({ length: 24 }, (_, i) => ({ key: `k${i % 4}`, payload: { fail: i === 9 } }));
    const submitted = await app.submit.submitOrderedMany('eo', items);
    await waitFor(() => seen.length === items.length, { timeoutMs: 15_000, message: 'every event read back' });
    const wrong = seen.filter((s) => s.state !== (s.event === 'completed' ? 'not listed' : 'listed'));
    expect(wrong).toEqual([]);
    expect(seen.filter((s) => s.event === 'dead').map((s) => s.id)).toEqual([submitted[9].id]);
  });

  it('delay queue: a process killed inside its completed listener leaves that completion recorded', async () => {
    const prefix = uniquePrefix('ev-kill');
    const producer = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { ek: {} } });
    const marker = join(dir, 'announced');
    const child = spawnChild('test/fixtures/announce-kill-app.ts', {
      DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: 'ek', DQ_MARKER: marker,
    });
    await child.waitForMessage((m) => m.type === 'ready', 30_000);
    // NOTE: the handler ends on a timer of its own, away from any take: the ack then waits for ACK_DELAY_MS.
    await producer.submit.submit('ek', { holdMs: 100 }, { id: 'k1' });
    expect((await child.exited).signal).toBe('SIGKILL');
    expect(readFileSync(marker, 'utf8')).toBe('k1');
    expect(await producer.inspect.getState('ek', 'k1')).toBe('done');
  });

  it('route queue: a process killed inside its completed listener leaves that task out of flight (acked)', async () => {
    const prefix = uniquePrefix('ev-kill-ord');
    const route = { ...routeTestOptions('evk', 'producer', 2) };
    const producer = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { ok: { ordered: true } }, route });
    const marker = join(dir, 'announced');
    const child = spawnChild('test/fixtures/announce-kill-app.ts', {
      DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: 'ok', DQ_MARKER: marker, DQ_ORDERED: '1', DQ_QID: 'evk',
    });
    await child.waitForMessage((m) => m.type === 'ready', 30_000);
    // The first finishes at once; the second holds its key's chain (and the batch) while the first is acked.
    const [first, second] = await producer.submit.submitOrderedMany('ok', [
      { key: 'a', payload: { holdMs: 0 } },
      { key: 'a', payload: { holdMs: 60_000 } },
    ]);
    expect((await child.exited).signal).toBe('SIGKILL');
    expect(existsSync(marker) && readFileSync(marker, 'utf8')).toBe(first.id);
    const inFlight = (await producer.inspect.listTasks('ok', 'running')).map((t) => t.id);
    expect(inFlight).toEqual([second.id]);
  });
});
