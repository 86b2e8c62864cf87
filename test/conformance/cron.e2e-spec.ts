/**
 * Conformance: schedules set at run time (`TaskScheduleService`), handled by this application
 * (`schedules: true`). Times are taken from the engine's clock: a probe task's `dueAt` (its submit time plus
 * its delay), so that `startAt` puts every tick well away from the ends of each `advance` (on Redis, real
 * time runs a little past each advance: margins of 200 ms or more keep the counts exact there too).
 *
 * Pins down:
 * - upsert answers the stored schedule: `{ name, everyMs | cron, type, payload (default null), startAt?,
 *   endAt?, timeZone (a cron's, 'UTC' by default; none with everyMs), missedTicks: 'runOnce', version: 1,
 *   nextTickAt, lastTickAt: null }`; `everyMs` ticks fall on startAt + k × everyMs, not before startAt; a
 *   cron's on its times (6 fields: seconds first);
 * - each tick submits one task of `type`, id `<name>@<tick ms>`, with the schedule's payload;
 * - get / list show `lastTickAt` and `nextTickAt` as ticks pass; `endAt`: no tick after it (nextTickAt null);
 * - the same definition again changes nothing (same version); a new one bumps the version and the next
 *   ticks carry it;
 * - remove: true, no tick runs any more, get null, list without it; remove again: false;
 * - bad input: InvalidScheduleError naming the schedule (everyMs under MIN_EVERY_MS, cron with everyMs, a bad
 *   expression, an unknown option, an ordered type), UnknownTaskTypeError for a type nobody runs; nothing
 *   written.
 */
import { InvalidScheduleError, MIN_EVERY_MS, UnknownTaskTypeError, type Task } from 'nestjs-distributed-queue';
import { workerClass } from '../support/queue-app';
import { describeEngines, rejectionOf, type Engine } from './engine';

const runs: { id: string; payload: unknown }[] = [];
const Worker = workerClass('ping', { concurrency: 1 }, (task: Task) => {
  runs.push({ id: task.id, payload: task.payload });
});
const Ordered = workerClass('ordered.ping', { ordered: true }, () => undefined);

/** The engine's clock now (ms): a probe task's due time less its delay; the probe is cancelled. */
async function engineNow(engine: Engine): Promise<number> {
  const id = await engine.submit.submit('ping', null, { id: 'clock-probe', delay: 60_000 });
  const { dueAt } = await engine.inspect.getTask('ping', id);
  expect(await engine.submit.cancel('ping', id)).toBe('cancelled');
  return dueAt! - 60_000;
}

const OPTIONS = { schedules: true };

describeEngines('schedules', (start) => {
  afterEach(() => {
    runs.length = 0;
  });

  it('every N ms from startAt: one task per tick, id <name>@<tick>, with the payload; get and list follow the ticks', async () => {
    // NOTE: ticks 2 s apart: on Redis the settles and calls between the advances take real time too (in a
    // loaded full run, over 800 ms: a third tick of 1 s ran before the last assertions).
    const every = 2000;
    const engine = await start(OPTIONS, [Worker]);
    // NOTE: the first tick 1.5 s away: on Redis the upsert and its checks run in real time before the first
    // advance (in a full run with six workers, over 300 ms: the tick 700 ms away ran before the check of none)
    const startAt = (await engineNow(engine)) + 1500;
    const info = await engine.schedules.upsert('beat', { everyMs: every, type: 'ping', payload: { v: 1 }, startAt });
    expect(info).toEqual({ name: 'beat', everyMs: every, type: 'ping', payload: { v: 1 }, startAt, missedTicks: 'runOnce', version: 1, nextTickAt: startAt, lastTickAt: null });
    await engine.advance(400);
    expect(runs).toEqual([]);
    await engine.advance(1300);
    expect(runs).toEqual([{ id: `beat@${startAt}`, payload: { v: 1 } }]);
    expect(await engine.inspect.getState('ping', `beat@${startAt}`)).toBe('done');
    await engine.advance(every);
    expect(runs.map((r) => r.id)).toEqual([`beat@${startAt}`, `beat@${startAt + every}`]);
    expect(await engine.schedules.get('beat')).toEqual({ ...info, lastTickAt: startAt + every, nextTickAt: startAt + 2 * every });
    expect(await engine.schedules.list()).toEqual([{ ...info, lastTickAt: startAt + every, nextTickAt: startAt + 2 * every }]);
    expect(await engine.schedules.get('nope')).toBeNull();
  });

  it('a cron expression ticks on its times; the payload defaults to null', async () => {
    const engine = await start(OPTIONS, [Worker]);
    const now = await engineNow(engine);
    // every other second (2 s between ticks: see the first case)
    const info = await engine.schedules.upsert('sec', { cron: '*/2 * * * * *', type: 'ping' });
    const first = info.nextTickAt!;
    expect(info).toEqual({ name: 'sec', cron: '*/2 * * * * *', timeZone: 'UTC', type: 'ping', payload: null, missedTicks: 'runOnce', version: 1, nextTickAt: first, lastTickAt: null });
    expect(first % 2000).toBe(0);
    expect(first).toBeGreaterThan(now);
    expect(first).toBeLessThanOrEqual(now + 2000 + 100);
    // to 200 ms past the first tick (the time spent since the probe counts on Redis)
    await engine.advance(first - now + 200);
    expect(runs).toEqual([{ id: `sec@${first}`, payload: null }]);
    await engine.advance(2000);
    expect(runs.map((r) => r.id)).toEqual([`sec@${first}`, `sec@${first + 2000}`]);
  });

  it('endAt: no tick after it; nextTickAt is null once the last tick passed', async () => {
    const engine = await start(OPTIONS, [Worker]);
    const startAt = (await engineNow(engine)) + 300;
    const info = await engine.schedules.upsert('short', { everyMs: 1000, type: 'ping', startAt, endAt: new Date(startAt + 1000) });
    expect(info).toMatchObject({ startAt, endAt: startAt + 1000, nextTickAt: startAt });
    await engine.advance(2600);
    expect(runs.map((r) => r.id)).toEqual([`short@${startAt}`, `short@${startAt + 1000}`]);
    expect(await engine.schedules.get('short')).toMatchObject({ lastTickAt: startAt + 1000, nextTickAt: null });
  });

  it('the same definition again changes nothing; a new one gets the next version and its ticks carry it', async () => {
    const engine = await start(OPTIONS, [Worker]);
    const startAt = (await engineNow(engine)) + 700;
    const v1 = await engine.schedules.upsert('beat', { everyMs: 2000, type: 'ping', payload: { v: 1 }, startAt });
    expect(await engine.schedules.upsert('beat', { everyMs: 2000, type: 'ping', payload: { v: 1 }, startAt })).toEqual(v1);
    await engine.advance(900);
    expect(runs).toEqual([{ id: `beat@${startAt}`, payload: { v: 1 } }]);
    const v2 = await engine.schedules.upsert('beat', { everyMs: 2000, type: 'ping', payload: { v: 2 }, startAt });
    expect(v2).toMatchObject({ version: 2, payload: { v: 2 }, nextTickAt: startAt + 2000 });
    await engine.advance(2000);
    expect(runs).toEqual([{ id: `beat@${startAt}`, payload: { v: 1 } }, { id: `beat@${startAt + 2000}`, payload: { v: 2 } }]);
  });

  it('remove: no tick runs any more; get null, list without it; a second remove is false', async () => {
    const engine = await start(OPTIONS, [Worker]);
    const startAt = (await engineNow(engine)) + 700;
    await engine.schedules.upsert('gone', { everyMs: 1000, type: 'ping', startAt });
    await engine.schedules.upsert('kept', { everyMs: 60_000, type: 'ping', startAt: startAt + 60_000 });
    await engine.advance(900);
    expect(runs.map((r) => r.id)).toEqual([`gone@${startAt}`]);
    expect(await engine.schedules.remove('gone')).toBe(true);
    expect(await engine.schedules.get('gone')).toBeNull();
    expect((await engine.schedules.list()).map((s) => s.name)).toEqual(['kept']);
    await engine.advance(2000);
    expect(runs.map((r) => r.id)).toEqual([`gone@${startAt}`]);
    expect(await engine.schedules.remove('gone')).toBe(false);
  });

  it('refuses a bad schedule with InvalidScheduleError naming it (or UnknownTaskTypeError), writing nothing', async () => {
    const engine = await start({ ...OPTIONS, route: { qId: 'cf', partitions: 2 } }, [Worker, Ordered]);
    const cases: [string, object, new (...args: never[]) => Error][] = [
      ['often', { everyMs: MIN_EVERY_MS - 1, type: 'ping' }, InvalidScheduleError],
      ['both', { everyMs: 1000, cron: '* * * * *', type: 'ping' }, InvalidScheduleError],
      ['neither', { type: 'ping' }, InvalidScheduleError],
      ['few', { cron: '* * *', type: 'ping' }, InvalidScheduleError],
      ['tz', { cron: '* * * * *', timeZone: 'Nowhere/Land', type: 'ping' }, InvalidScheduleError],
      ['typo', { everyMs: 1000, type: 'ping', timezone: 'UTC' }, InvalidScheduleError],
      ['backwards', { everyMs: 1000, type: 'ping', startAt: 5000, endAt: 4000 }, InvalidScheduleError],
      ['ordered', { everyMs: 1000, type: 'ordered.ping' }, InvalidScheduleError],
      ['internal', { everyMs: 1000, type: '__cron__' }, InvalidScheduleError],
      ['nobody', { everyMs: 1000, type: 'no.such.type' }, UnknownTaskTypeError],
    ];
    for (const [name, options, ErrorClass] of cases) {
      const error = await rejectionOf(engine.schedules.upsert(name, options as never));
      expect([name, error]).toEqual([name, expect.any(ErrorClass)]);
      if (ErrorClass === InvalidScheduleError) expect(error).toMatchObject({ schedule: name });
    }
    expect(await engine.schedules.list()).toEqual([]);
  });
});
