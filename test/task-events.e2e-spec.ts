import { Injectable } from '@nestjs/common';
import { OnTaskEvent, type TaskEvent, type TaskEventName } from 'nestjs-distributed-queue';
import { killAllChildren, spawnChild, type ChildHandle } from './support/child';
import { keysOf, untilAborted, useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

/** Records the events it hears, as `event:id` strings and the events themselves. */
function recorder(type: string, scope: 'local' | 'fleet', events: TaskEventName[] | '*' = '*') {
  const seen: TaskEvent[] = [];
  @Injectable()
  class Recorder {
    @OnTaskEvent(type, events, { scope })
    on(event: TaskEvent): void {
      seen.push(event);
    }
  }
  const names = (id?: string) => seen.filter((e) => id === undefined || e.task.id === id).map((e) => e.event);
  return { Recorder, seen, names };
}

/** A listener that throws on every event and one that never settles: neither may affect a task. */
@Injectable()
class BadListeners {
  calls = 0;
  @OnTaskEvent('*', '*')
  throws(): void {
    this.calls++;
    throw new Error('listener exploded');
  }

  @OnTaskEvent('*', '*')
  hangs(): Promise<never> {
    return new Promise<never>(() => undefined);
  }
}

function worker(target: RedisTarget, prefix: string, type: string, env: Record<string, string> = {}): ChildHandle {
  return spawnChild('test/fixtures/worker-app.ts', {
    DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: type, DQ_HOLD_MS: '0', DQ_CONCURRENCY: '4', ...env,
  });
}

describe.each(getTargets().map((t) => [t.name, t] as const))('lifecycle events on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  afterEach(() => killAllChildren());

  it('local events follow each task of this instance; a throwing or hanging listener changes nothing', async () => {
    const { Recorder, seen, names } = recorder('ev', 'local');
    const Worker = workerClass<{ mode: string }>('ev', { concurrency: 4, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 10 } }, async (task, signal) => {
      if (task.payload.mode === 'hold') return untilAborted(signal);
      if (task.payload.mode === 'always' || (task.payload.mode === 'once' && task.attempt === 1)) throw new TypeError(`no ${task.id}`);
      return { ok: task.id };
    });
    const prefix = uniquePrefix('ev-local');
    // Streams off: local events do not need them, and nothing is written.
    const app = await start({ connection: target.connection, keyPrefix: prefix, events: { stream: false } }, [Worker, Recorder, BadListeners]);
    const ids = ['ok1', 'ok2', 'once', 'always', 'hold'];
    await app.submit.submitMany('ev', ids.map((id) => ({ id, payload: { mode: id.startsWith('ok') ? 'ok' : id } })));
    await waitFor(async () => (await app.inspect.getState('ev', 'hold')) === 'running', { timeoutMs: 10_000, message: 'hold running' });
    expect(await app.submit.cancel('ev', 'hold')).toBe('cancel-requested');
    await waitFor(() => names('hold').includes('cancelled') && names('always').includes('dead') && names('once').includes('completed'), {
      timeoutMs: 10_000, message: 'events of every task',
    });
    expect(names('ok1')).toEqual(['completed']);
    expect(names('once')).toEqual(['failed', 'retrying', 'completed']);
    expect(names('always')).toEqual(['failed', 'retrying', 'failed', 'dead']);
    expect(names('hold')).toEqual(['failed', 'cancelled']);
    const done = seen.find((e) => e.task.id === 'once' && e.event === 'completed')!;
    expect(done).toMatchObject({ scope: 'local', result: { ok: 'once' }, task: { type: 'ev', attempt: 2, payload: { mode: 'once' } } });
    expect(done.durationMs).toBeGreaterThanOrEqual(0);
    const dead = seen.find((e) => e.event === 'dead')!;
    expect(dead.error).toBeInstanceOf(TypeError);
    expect(dead.error?.message).toBe('no always');
    // The tasks themselves are as if nobody listened.
    const counts = await app.inspect.getCounts('ev');
    expect(counts).toMatchObject({ done: 3, dead: 1, running: 0, ready: 0, delayed: 0 });
    expect(app.app.get(BadListeners).calls).toBe(seen.length);
    expect(await redis().exists(keysOf(prefix, 'ev').log)).toBe(0);
  });

  it('without a follower the stream holds failures but no completions (the hot path writes nothing)', async () => {
    const prefix = uniquePrefix('ev-unfollowed');
    const Worker = workerClass<number>('uf', { concurrency: 4, maxAttempts: 1 }, (task) => {
      if (task.payload === 0) throw new Error('zero');
    });
    const app = await start({ connection: target.connection, keyPrefix: prefix }, [Worker]);
    await app.submit.submitMany('uf', [0, 1, 2, 3].map((payload) => ({ payload })));
    await waitFor(async () => (await app.inspect.getCounts('uf')).done === 3, { timeoutMs: 10_000, message: 'tasks done' });
    const entries = (await redis().xrange(keysOf(prefix, 'uf').log, '-', '+')) as [string, string[]][];
    expect(entries.map(([, fields]) => fields[1])).toEqual(['dead']);
  });

  it('fleet events: a producer-only process hears every completion of the workers in another process, once', async () => {
    const prefix = uniquePrefix('ev-fleet');
    const { Recorder, seen, names } = recorder('fe', 'fleet');
    const local = recorder('fe', 'local');
    const producer = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { fe: {} } }, [Recorder, local.Recorder]);
    const child = worker(target, prefix, 'fe');
    await child.waitForMessage((m) => m.type === 'ready', 30_000);
    const results = await producer.submit.submitMany('fe', Array.from({ length: 120 }, (_, i) => ({ payload: i })));
    const late = await producer.submit.submit('fe', 'x', { id: 'late', delay: 60_000 });
    expect(await producer.submit.cancel('fe', late)).toBe('cancelled');
    await waitFor(() => seen.filter((e) => e.event === 'completed').length >= 120 && names('late').length > 0, {
      timeoutMs: 15_000, message: 'every completion heard',
    });
    await sleep(300);
    const completed = seen.filter((e) => e.event === 'completed').map((e) => e.task.id);
    expect([...completed].sort()).toEqual(results.map((r) => r.id).sort());
    expect(names('late')).toEqual(['cancelled']);
    expect(seen.every((e) => e.scope === 'fleet' && e.task.type === 'fe' && e.task.payload === undefined)).toBe(true);
    expect(seen.find((e) => e.event === 'completed')?.task.attempt).toBe(1);
    // It ran nothing itself.
    expect(local.seen).toEqual([]);
  });

  // NOTE: on the single server only: one CLIENT LIST shows every connection.
  (target.name === 'single' ? it : it.skip)('fleet events are read over a connection of their own (not the commands one), closed with the application', async () => {
    const prefix = uniquePrefix('ev-conn');
    const { Recorder, seen } = recorder('fc', 'fleet');
    const W = workerClass('fc', {}, () => undefined);
    const app = await start({ connection: target.connection, keyPrefix: prefix, events: { followIntervalMs: 20 } }, [W, Recorder]);
    await app.submit.submitMany('fc', Array.from({ length: 20 }, (_, i) => ({ payload: i })));
    await waitFor(() => seen.filter((e) => e.event === 'completed').length === 20, { timeoutMs: 10_000, message: 'every completion heard' });
    const clients = async () => {
      const list = String(await redis().client('LIST'));
      return list.split('\n').filter((line) => line.includes(` name=dq:${prefix}:`)).map((line) => ({
        name: / name=(\S+)/.exec(line)![1].slice(`dq:${prefix}:`.length),
        cmd: / cmd=(\S+)/.exec(line)![1],
      }));
    };
    // NOTE: the follower reads every 20 ms; the commands connection is busy with other things.
    await waitFor(async () => (await clients()).some((c) => c.name === 'streams' && c.cmd === 'xread'), { timeoutMs: 5000, message: 'a streams connection reading' });
    expect((await clients()).map((c) => c.name).sort()).toEqual(['commands', 'streams', 'subscriber']);
    await app.close();
    await waitFor(async () => (await clients()).length === 0, { timeoutMs: 5000, message: 'every connection closed' });
  });

  it('fleet events: a task recovered from a killed worker, then completed elsewhere', async () => {
    const prefix = uniquePrefix('ev-recover');
    const { Recorder, names } = recorder('fr', 'fleet');
    const producer = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { fr: {} } }, [Recorder]);
    const stuck = worker(target, prefix, 'fr', { DQ_HOLD_MS: '600000', DQ_VISIBILITY_MS: '1000' });
    await stuck.waitForMessage((m) => m.type === 'ready', 30_000);
    await producer.submit.submit('fr', 1, { id: 'r1' });
    await stuck.waitForMessage((m) => m.type === 'start' && m.id === 'r1', 10_000);
    stuck.kill('SIGKILL');
    await stuck.exited;
    const rescuer = worker(target, prefix, 'fr', { DQ_VISIBILITY_MS: '1000' });
    await rescuer.waitForMessage((m) => m.type === 'done' && m.id === 'r1', 20_000);
    await waitFor(() => names('r1').includes('completed'), { timeoutMs: 5000, message: 'completion heard' });
    expect(names('r1')).toEqual(['recovered', 'completed']);
  });

  it('a running task cancelled: fleet listeners hear failed then cancelled, as local ones do; getActivity counts the failure', async () => {
    const prefix = uniquePrefix('ev-cancel');
    const fleet = recorder('fx', 'fleet');
    const local = recorder('fx', 'local');
    const Worker = workerClass('fx', { concurrency: 2 }, (_task, signal) => untilAborted(signal));
    const app = await start({ connection: target.connection, keyPrefix: prefix }, [Worker, fleet.Recorder, local.Recorder]);
    await app.submit.submit('fx', 1, { id: 'run' });
    await app.submit.submit('fx', 1, { id: 'wait', delay: 60_000 });
    await waitFor(async () => (await app.inspect.getState('fx', 'run')) === 'running', { timeoutMs: 10_000, message: 'run running' });
    expect(await app.submit.cancel('fx', 'run')).toBe('cancel-requested');
    expect(await app.submit.cancel('fx', 'wait')).toBe('cancelled');
    await waitFor(() => fleet.names('run').includes('cancelled') && fleet.names('wait').includes('cancelled') && local.names('run').includes('cancelled'), {
      timeoutMs: 10_000, message: 'the cancels heard',
    });
    expect(local.names('run')).toEqual(['failed', 'cancelled']);
    expect(fleet.names('run')).toEqual(['failed', 'cancelled']);
    // A waiting task cancelled ran no attempt: no failure.
    expect(fleet.names('wait')).toEqual(['cancelled']);
    const failed = fleet.seen.find((e) => e.event === 'failed')!;
    expect(failed.task).toMatchObject({ id: 'run', type: 'fx', attempt: 1 });
    expect(failed.error).toMatchObject({ name: 'TaskCancelledError', attempts: 1 });
    expect(await app.inspect.getActivity('fx')).toEqual({ windowMs: 60_000, counts: { failed: 1, cancelled: 2 } });
  });

  it('fleet events: a task cancelled while its worker was dead is cancelled when its lease expires, and heard', async () => {
    const prefix = uniquePrefix('ev-cancel-dead');
    const { Recorder, names } = recorder('fd', 'fleet');
    const producer = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { fd: {} } }, [Recorder]);
    const stuck = worker(target, prefix, 'fd', { DQ_HOLD_MS: '600000', DQ_VISIBILITY_MS: '1000' });
    await stuck.waitForMessage((m) => m.type === 'ready', 30_000);
    await producer.submit.submit('fd', 1, { id: 'c1' });
    await stuck.waitForMessage((m) => m.type === 'start' && m.id === 'c1', 10_000);
    stuck.kill('SIGKILL');
    await stuck.exited;
    // Nobody runs it to abort it: the cancel is only requested, and done by the take that recovers the lease.
    expect(await producer.submit.cancel('fd', 'c1')).toBe('cancel-requested');
    worker(target, prefix, 'fd', { DQ_VISIBILITY_MS: '1000' });
    await waitFor(() => names('c1').includes('cancelled'), { timeoutMs: 20_000, message: 'the cancel heard' });
    expect(names('c1')).toEqual(['cancelled']);
    expect(await producer.inspect.getState('fd', 'c1')).toBe('unknown');
    expect((await producer.inspect.getActivity('fd')).counts).toEqual({ cancelled: 1 });
  });

  it('ordered tasks: local and fleet events name type and key; the dead one carries its error', async () => {
    const prefix = uniquePrefix('ev-ord');
    const fleet = recorder('acct', 'fleet');
    const local = recorder('acct', 'local');
    const Worker = workerClass<number>('acct', { ordered: true, maxAttempts: 1 }, (task) => {
      if (task.payload === 13) throw new RangeError('unlucky');
    });
    const route = routeTestOptions('evq', 'm1', 4);
    await start({ connection: target.connection, keyPrefix: prefix, route }, [Worker, local.Recorder]);
    const watcher = await start(
      { connection: target.connection, keyPrefix: prefix, workers: false, types: { acct: { ordered: true } }, route: { ...route, machineId: 'w' } },
      [fleet.Recorder],
    );
    const submitted = await watcher.submit.submitOrderedMany('acct', Array.from({ length: 40 }, (_, i) => ({ key: `k${i % 5}`, payload: i })));
    await waitFor(() => fleet.seen.filter((e) => e.event === 'completed' || e.event === 'dead').length >= 40, { timeoutMs: 20_000, message: 'fleet events' });
    const byId = new Map(submitted.map((r, i) => [r.id, i]));
    const dead = fleet.seen.filter((e) => e.event === 'dead');
    expect(dead.map((e) => byId.get(e.task.id))).toEqual([13]);
    expect(dead[0].task).toMatchObject({ type: 'acct', key: 'k3' });
    expect(dead[0].error).toMatchObject({ name: 'RangeError', message: 'unlucky' });
    expect(fleet.names().filter((n) => n === 'completed')).toHaveLength(39);
    await waitFor(() => local.seen.filter((e) => e.event === 'completed').length === 39, { timeoutMs: 5000, message: 'local events' });
    const localDead = local.seen.filter((e) => e.event === 'dead');
    expect(localDead.map((e) => e.task.payload)).toEqual([13]);
    expect(localDead[0].task.key).toBe('k3');
  });
});
