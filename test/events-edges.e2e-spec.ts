import { Injectable } from '@nestjs/common';
import { MAX_MESSAGE_BYTES, OnTaskEvent, type TaskEvent } from 'nestjs-distributed-queue';
import type { StreamEntry } from 'nestjs-distributed-queue/events/stream-entry';
import { killAllChildren } from './support/child';
import { keysOf, useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions, startMachine } from './support/route';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';
import { fleetApp, fleetRecorder } from './support/fleet';

/*
 * Failure matrix of fleet events (docs/failure-matrix.md, section 1), edge cells:
 *  - largest and long values: a 1 MB payload (local events carry it, fleet events and the stream do not),
 *    a type of 200 characters, whole in both, and a 10 kB error message (whole locally, bounded to 4 KiB in the fleet);
 *  - bad input: unreadable entries written into a followed stream are skipped, the follower goes on;
 *  - README: the fleet `dead` of a take that buries an expired reservation past `maxAttempts` (the worker
 *    SIGKILLed on its last attempt);
 *  - largest: `getActivity` over a window holding more than its 10,000-entry read-back counts the newest
 *    10,000 entries (a burst of older events hides no recent failure);
 *  - README: the local `recovered` of ordered tasks, emitted by the partition's new owner for the tasks of
 *    the batch it replays (the old owner SIGKILLed mid-batch);
 *  - single server and cluster (both targets).
 */

describe.each(getTargets().map((t) => [t.name, t] as const))('fleet events edges on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  afterEach(() => killAllChildren());

  it('a 1 MB payload: local listeners get it, fleet events and the stream carry none; a type of 200 characters arrives whole, a 10 kB error whole locally and bounded in the fleet', async () => {
    const prefix = uniquePrefix('evm-large');
    const type = `t${'y'.repeat(199)}`;
    const fleet = fleetRecorder(type);
    const local: TaskEvent[] = [];
    @Injectable()
    class Local {
      @OnTaskEvent(type, '*')
      on(event: TaskEvent): void {
        local.push(event);
      }
    }
    const message = 'm'.repeat(10_000);
    const W = workerClass<{ pad?: string }>(type, { maxAttempts: 1 }, (task) => {
      if (task.id === 'err') throw new RangeError(message);
    });
    const app = await start({ connection: target.connection, keyPrefix: prefix, events: { followIntervalMs: 50 } }, [W, fleet.Recorder, Local]);
    const pad = 'p'.repeat(1024 * 1024 - '{"pad":""}'.length);
    await app.submit.submit(type, { pad }, { id: 'big' });
    await app.submit.submit(type, {}, { id: 'err' });
    const names = (list: TaskEvent[]) => list.map((e) => `${e.event}:${e.task.id}`).sort();
    const expected = ['completed:big', 'dead:err', 'failed:err'];
    await waitFor(() => names(local).length >= 3 && names(fleet.seen).length >= 3, { timeoutMs: 15_000, message: 'every event heard' });
    await sleep(300);
    expect(names(local)).toEqual(expected);
    expect(names(fleet.seen)).toEqual(expected);
    expect((local.find((e) => e.task.id === 'big')!.task.payload as { pad: string }).pad).toBe(pad);
    expect(fleet.seen.every((e) => e.task.payload === undefined && e.task.type === type)).toBe(true);
    // Local listeners get the Error as thrown; the fleet gets what was stored: the message bounded (MAX_MESSAGE_BYTES).
    const localDead = local.find((e) => e.event === 'dead')!;
    expect([localDead.error?.name, localDead.error?.message === message]).toEqual(['RangeError', true]);
    const fleetDead = fleet.seen.find((e) => e.event === 'dead')!;
    expect(fleetDead.error?.name).toBe('RangeError');
    expect(Buffer.byteLength(fleetDead.error!.message)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(fleetDead.error!.message).toMatch(/^m{4000,} … \(\d+ more characters\)$/);
    // The stream holds ids and errors, never payloads.
    const entries = (await redis().xrange(keysOf(prefix, type).log, '-', '+')) as StreamEntry[];
    expect(entries.length).toBeGreaterThan(0);
    expect(Math.max(...entries.map(([, fields]) => fields.join('').length))).toBeLessThan(message.length + 1000);
  });

  it('unreadable entries in a followed stream are skipped: the follower goes on and hears the real events once', async () => {
    const prefix = uniquePrefix('evm-garbage');
    const type = 'fg';
    const { Recorder, seen } = fleetRecorder(type);
    const W = workerClass(type, {}, () => undefined);
    const app = await start({ connection: target.connection, keyPrefix: prefix, events: { followIntervalMs: 50 } }, [W, Recorder]);
    const log = keysOf(prefix, type).log;
    await app.submit.submit(type, 0, { id: 'before' });
    await waitFor(() => seen.some((e) => e.task.id === 'before'), { timeoutMs: 10_000, message: 'the first event' });
    const garbage = [
      ['e', 'no-such-event', 'ids', '["g1"]'], ['e', 'completed', 'ids', 'not json'], ['x', 'y'],
      ['e', 'completed', 'ids', '{"not":"a list"}'], ['e', 'dead', 'ids', '["g2"]', 'err', '[[[['], ['e', ''],
    ];
    for (const fields of garbage) await redis().xadd(log, '*', ...fields);
    await app.submit.submitMany(type, ['after1', 'after2'].map((id) => ({ id, payload: 1 })));
    await waitFor(() => seen.filter((e) => e.task.id.startsWith('after')).length === 2, { timeoutMs: 10_000, message: 'the events after the garbage' });
    await sleep(300);
    expect(seen.filter((e) => e.task.id !== 'g2').map((e) => `${e.event}:${e.task.id}`)).toEqual(['completed:before', 'completed:after1', 'completed:after2']);
    // An entry whose ids can be read but whose error cannot still names its task (failed and dead, no error).
    expect(seen.filter((e) => e.task.id === 'g2').map((e) => [e.event, e.error])).toEqual([['failed', undefined], ['dead', undefined]]);
  });

  it('a worker SIGKILLed on its last attempt: the take that buries the expired reservation gives the fleet failed and dead (LeaseExpiredError)', async () => {
    const prefix = uniquePrefix('evm-bury');
    const type = 'fb';
    const { Recorder, seen } = fleetRecorder(type);
    const doomed = fleetApp(target, prefix, type, { DQ_WORK: '1', DQ_MAX_ATTEMPTS: '1', DQ_VISIBILITY_MS: '1000' });
    await doomed.waitForMessage((m) => m.type === 'ready', 60_000);
    const producer = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { [type]: {} }, events: { followIntervalMs: 50 } }, [Recorder]);
    await producer.submit.submit(type, { holdMs: 600_000 }, { id: 'b1' });
    await doomed.waitForMessage((m) => m.type === 'start' && m.id === 'b1', 15_000);
    doomed.kill('SIGKILL');
    await doomed.exited;
    // A worker of the same options takes the expired reservation: past maxAttempts (1), it buries it.
    const W = workerClass(type, { maxAttempts: 1, visibilityTimeoutMs: 1000 }, () => undefined);
    await start({ connection: target.connection, keyPrefix: prefix, events: { followIntervalMs: 50 } }, [W]);
    await waitFor(() => seen.some((e) => e.event === 'dead'), { timeoutMs: 20_000, message: 'dead heard' });
    await sleep(300);
    expect(seen.map((e) => `${e.event}:${e.task.id}`)).toEqual(['failed:b1', 'dead:b1']);
    expect(seen[1].error).toMatchObject({ name: 'LeaseExpiredError', attempts: 1 });
    expect(seen[1].task).toMatchObject({ id: 'b1', type, attempt: 1 });
    expect(await producer.inspect.getState(type, 'b1')).toBe('dead');
  });
  it('ordered tasks: the new owner of a killed machine\'s partitions emits a local recovered for each task it replays, then completed', async () => {
    const prefix = uniquePrefix('evm-route-rec');
    const qId = 'rec';
    const partitions = 2;
    // m1 runs even tasks for 10 minutes: killed in the middle of its batches.
    const m1 = startMachine(target, prefix, qId, 'm1', { DQ_PARTITIONS: String(partitions), DQ_SLOW_MS: '600000', DQ_OFFLINE_MS: '1000', DQ_HEARTBEAT_MS: '200' });
    await m1.waitForMessage((m) => m.type === 'ready', 60_000);
    const route = routeTestOptions(qId, 'm2', partitions, 1000, 200);
    const producer = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { ledger: { ordered: true } }, route: { ...route, machineId: 'p' } }, []);
    const keys = ['k0', 'k1', 'k2', 'k3'];
    await producer.submit.submitOrderedMany('ledger', keys.map((key) => ({ key, payload: { n: 0 } })));
    await waitFor(async () => (await Promise.all(keys.map((k) => redis().llen(`${prefix}:log:${k}`)))).every((n) => n === 1), {
      timeoutMs: 15_000, message: 'm1 running every key',
    });
    m1.kill('SIGKILL');
    await m1.exited;

    const local: TaskEvent[] = [];
    @Injectable()
    class Local {
      @OnTaskEvent('ledger', '*')
      on(event: TaskEvent): void {
        local.push(event);
      }
    }
    const W = workerClass<{ n: number }>('ledger', { ordered: true }, () => undefined);
    await start({ connection: target.connection, keyPrefix: prefix, route, events: { stream: false } }, [W, Local]);
    await waitFor(() => local.filter((e) => e.event === 'completed').length === keys.length, { timeoutMs: 20_000, message: 'every task completed by m2' });
    await sleep(300);
    const byKey = (key: string) => local.filter((e) => e.task.key === key).map((e) => e.event);
    for (const key of keys) expect([key, byKey(key)]).toEqual([key, ['recovered', 'completed']]);
    expect(local.every((e) => e.scope === 'local' && e.task.type === 'ledger')).toBe(true);
  });
  it('getActivity over more than 10,000 entries in its window counts the newest 10,000: a burst of older events hides no recent failure', async () => {
    const prefix = uniquePrefix('evm-activity');
    const type = 'fa';
    const W = workerClass<string>(type, { maxAttempts: 1 }, () => {
      throw new Error('no');
    });
    const app = await start({ connection: target.connection, keyPrefix: prefix, events: { followIntervalMs: 50 } }, [W]);
    const burst = 10_000;
    const ids = Array.from({ length: burst }, (_, i) => `c${i}`);
    for (let i = 0; i < burst; i += 1000) await app.submit.submitMany(type, ids.slice(i, i + 1000).map((id) => ({ id, payload: 'x', delay: 600_000 })));
    // Each cancel of a waiting task is one entry of the stream.
    for (let i = 0; i < burst; i += 200) await Promise.all(ids.slice(i, i + 200).map((id) => app.submit.cancel(type, id)));
    const failures = 50;
    await app.submit.submitMany(type, Array.from({ length: failures }, (_, i) => ({ id: `f${i}`, payload: 'x' })));
    await waitFor(async () => (await app.inspect.getCounts(type)).dead === failures, { timeoutMs: 20_000, message: 'the failures' });
    expect(await redis().xlen(keysOf(prefix, type).log)).toBe(burst + failures);
    // NOTE: a window of 10 minutes: the whole test is inside it however slow the machine.
    const { counts } = await app.inspect.getActivity(type, 600_000);
    expect(counts).toEqual({ cancelled: burst - failures, failed: failures, dead: failures });
  }, 120_000);
});
