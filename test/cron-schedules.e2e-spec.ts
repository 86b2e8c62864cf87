import { Injectable } from '@nestjs/common';
import { DistributedCron, InvalidScheduleError, TaskScheduleService, UnknownTaskTypeError } from 'nestjs-distributed-queue';
import { spawnChild, type ChildHandle } from './support/child';
import { connect, keysOf, startQueueApp, useAppsAndChildren } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

interface TaskReport {
  type: 'task';
  instance: string;
  id: string;
  payload: { v: number };
  at: number;
}

async function startInstance(target: RedisTarget, prefix: string, instance: string): Promise<ChildHandle> {
  const child = spawnChild('test/fixtures/cron-app.ts', {
    DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_INSTANCE: instance, DQ_RUN_TYPE: 'report', DQ_CRON: '0 0 0 1 1 *',
  });
  await child.waitForMessage((m) => m.type === 'ready', 30_000);
  return child;
}

const tasks = (fleet: ChildHandle[]): TaskReport[] => fleet.flatMap((c) => c.messages.filter((m: TaskReport) => m.type === 'task')).sort((a, b) => a.at - b.at);

describe.each(getTargets().map((t) => [t.name, t] as const))('schedules set at run time on %s', (_name, target) => {
  const apps = useAppsAndChildren();

  it('an upsert from one instance changes what the others run; remove stops it; list shows it', async () => {
    const prefix = uniquePrefix('cron-upsert');
    const fleet = await Promise.all(['a', 'b'].map((i) => startInstance(target, prefix, i)));
    const admin = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: { report: {} } });
    apps.push(admin);
    const schedules = admin.app.get(TaskScheduleService);
    const created = await schedules.upsert('report', { everyMs: 1000, type: 'report', payload: { v: 1 } });
    expect(created).toMatchObject({ name: 'report', everyMs: 1000, type: 'report', payload: { v: 1 }, missedTicks: 'runOnce', version: 1 });
    expect(created.nextTickAt! % 1000).toBe(0);
    await waitFor(() => tasks(fleet).length >= 3, { timeoutMs: 10_000, message: 'ticks of v1' });
    // The same definition again changes nothing.
    expect((await schedules.upsert('report', { everyMs: 1000, type: 'report', payload: { v: 1 } })).version).toBe(1);

    const changedAt = Date.now();
    expect((await schedules.upsert('report', { everyMs: 1000, type: 'report', payload: { v: 2 } })).version).toBe(2);
    await waitFor(() => tasks(fleet).filter((t) => t.payload.v === 2).length >= 3, { timeoutMs: 10_000, message: 'ticks of v2' });
    expect(tasks(fleet).filter((t) => t.payload.v === 1 && t.at > changedAt + 100)).toEqual([]);
    const ids = tasks(fleet).map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^report@\d+000$/);

    const listed = (await schedules.list()).find((x) => x.name === 'report')!;
    expect(listed).toMatchObject({ name: 'report', version: 2, payload: { v: 2 } });
    expect(listed.lastTickAt).toBeGreaterThan(changedAt - 1000);
    expect(listed.nextTickAt).toBeGreaterThan(listed.lastTickAt!);

    expect(await schedules.remove('report')).toBe(true);
    const removedAt = Date.now();
    await sleep(2500);
    expect(tasks(fleet).filter((t) => t.at > removedAt + 100)).toEqual([]);
    expect((await schedules.list()).map((x) => x.name)).toEqual(['sweep']);
    expect(await schedules.remove('report')).toBe(false);
  });

  it('refuses a bad schedule at the call with InvalidScheduleError naming it, writing nothing', async () => {
    const admin = await startQueueApp({ connection: target.connection, keyPrefix: uniquePrefix('cron-bad'), workers: false });
    apps.push(admin);
    const schedules = admin.app.get(TaskScheduleService);
    const bad = schedules.upsert('nightly', { cron: '0 0 3 * * * * *', type: 'report' });
    await expect(bad).rejects.toBeInstanceOf(InvalidScheduleError);
    await expect(bad).rejects.toMatchObject({ schedule: 'nightly' });
    await expect(schedules.upsert('often', { everyMs: 10, type: 'report' })).rejects.toThrow(/everyMs must be an integer from 1000/);
    await expect(schedules.upsert('tz', { cron: '* * * * *', timeZone: 'Nowhere/Land', type: 'report' })).rejects.toThrow(/unknown time zone/);
    await expect(schedules.upsert('few', { cron: '* * *', type: 'report' })).rejects.toThrow(/5 fields, or 6 with seconds first/);
    expect(await schedules.list()).toEqual([]);
  });

  it('refuses unknown option names, internal types and types no application here handles, quoting long values, writing nothing', async () => {
    const admin = await startQueueApp({
      connection: target.connection, keyPrefix: uniquePrefix('cron-strict'), workers: false, types: { report: {}, 'orders.ship': { ordered: true } },
    });
    apps.push(admin);
    const schedules = admin.app.get(TaskScheduleService);
    const refusal = async (name: string, options: object): Promise<InvalidScheduleError | UnknownTaskTypeError> => {
      const error = await schedules.upsert(name, options as never).then(() => null, (e: Error) => e);
      if (!(error instanceof InvalidScheduleError || error instanceof UnknownTaskTypeError)) throw new Error(`not refused as expected: ${String(error)}`);
      return error;
    };
    // 'timezone' (lower case) was ignored: the schedule silently ran in UTC.
    const lowerCase = await refusal('berlin', { cron: '0 0 6 * * *', timezone: 'Europe/Berlin', type: 'report' });
    expect(lowerCase).toBeInstanceOf(InvalidScheduleError);
    expect(lowerCase.message).toMatch(/unknown option "timezone" \(known: cron, everyMs, type, payload, timeZone, startAt, endAt, missedTicks\)/);
    // The library's internal types would fail forever in the tick queue.
    for (const type of ['__cron__', '__cron__.sweep', '__route__.orders']) {
      expect((await refusal('internal', { everyMs: 1000, type })).message).toMatch(/internal type/);
    }
    // An ordered type runs from the route queue only: a schedule submits delay tasks.
    expect((await refusal('ordered', { everyMs: 1000, type: 'orders.ship' })).message).toMatch(/"orders.ship" is ordered/);
    // A type no worker here runs and not declared in `types` (strictTypes, the default): as submit refuses it.
    expect(await refusal('nobody', { everyMs: 1000, type: 'no.such.type' })).toBeInstanceOf(UnknownTaskTypeError);
    // Values of 100,000 characters are quoted by a prefix with their length.
    const long = 'x'.repeat(100_000);
    for (const [name, options] of [
      ['tz', { cron: '* * * * *', timeZone: long, type: 'report' }],
      ['cron', { cron: long, type: 'report' }],
      ['miss', { everyMs: 1000, type: 'report', missedTicks: long }],
      ['every', { everyMs: long, type: 'report' }],
      ['key', { everyMs: 1000, type: 'report', [long]: 1 }],
      [long, { everyMs: 1000, type: 'report' }],
    ] as const) {
      const message = (await refusal(name, options)).message;
      expect([name.slice(0, 10), message.length < 400]).toEqual([name.slice(0, 10), true]);
      expect(message).toContain('(100000 characters)');
    }
    expect(await schedules.list()).toEqual([]);
  });

  it('remembers the last 256 submitted ticks of a schedule, for a day: a repeat or an older tick submits nothing', async () => {
    const prefix = uniquePrefix('cron-memory');
    const admin = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: { report: {} } });
    apps.push(admin);
    const store = admin.app.get(TaskScheduleService).store;
    const submit = (tick: number) => store.submitRun('report', 'mem', `mem@${tick}`, tick, '{}');
    for (let tick = 1; tick <= 260; tick++) expect(await submit(tick)).toBe('submitted');
    expect(await submit(260)).toBe('again');
    expect(await submit(4)).toBe('again');
    expect(await submit(5)).toBe('again');
    expect(await submit(261)).toBe('submitted');
    const redis = connect(target);
    try {
      const key = `${keysOf(prefix, 'report').jobs.slice(0, -':jobs'.length)}:cron:mem`;
      expect(await redis.zcard(key)).toBe(256);
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(24 * 3_600_000 - 60_000);
      expect(ttl).toBeLessThanOrEqual(24 * 3_600_000);
      expect(await redis.hlen(keysOf(prefix, 'report').jobs)).toBe(261);
    } finally {
      redis.disconnect();
    }
  });

  it('a bad @DistributedCron fails the start with InvalidScheduleError naming the schedule', async () => {
    @Injectable()
    class BadCron {
      @DistributedCron('61 * * * * *', { name: 'broken' })
      run(): void {}
    }
    await expect(startQueueApp({ connection: target.connection, keyPrefix: uniquePrefix('cron-start') }, [BadCron])).rejects.toMatchObject({
      constructor: InvalidScheduleError,
      schedule: 'broken',
    });
  });
});
