import { defineTask } from '../contracts/task-contract';
import { InvalidScheduleError } from '../errors';
import { lastTickBy, nextTick, toDefinition, type ScheduleDefinition } from './schedule-definition';

const MAX = 1024 * 1024;
const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const def = (options: Parameters<typeof toDefinition>[1]): ScheduleDefinition => toDefinition('s', options, MAX);

describe('schedule definitions', () => {
  it('stores the same definition as the same JSON, defaults filled in', () => {
    const a = JSON.stringify(toDefinition('daily', { cron: '0 0 3 * * *', type: 'report', payload: { x: 1 } }, MAX));
    const b = JSON.stringify(toDefinition('daily', { type: 'report', payload: { x: 1 }, cron: '0 0 3 * * *', missedTicks: 'runOnce' }, MAX));
    expect(a).toBe(b);
    expect(JSON.parse(a)).toEqual({ cron: '0 0 3 * * *', timeZone: 'UTC', type: 'report', payload: '{"x":1}', missedTicks: 'runOnce' });
  });

  it('takes a contract for its type: stored as the type string; an ordered contract is refused', () => {
    const Report = defineTask<{ day: string }>('report.daily');
    expect(toDefinition('r', { everyMs: 60_000, type: Report, payload: { day: 'mon' } }, 1024)).toEqual(toDefinition('r', { everyMs: 60_000, type: 'report.daily', payload: { day: 'mon' } }, 1024));
    const Ledger = defineTask<{ n: number }>('ledger', { ordered: true });
    expect(() => toDefinition('l', { everyMs: 60_000, type: Ledger as never }, 1024)).toThrow(InvalidScheduleError);
    expect(() => toDefinition('l', { everyMs: 60_000, type: Ledger as never }, 1024)).toThrow(/"ledger" is ordered/);
  });

  it('refuses what cannot run, naming the schedule', () => {
    const refused = (name: string, options: object): string => {
      try {
        toDefinition(name, options as never, MAX);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidScheduleError);
        expect((error as InvalidScheduleError).schedule).toBe(name);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refused('both', { cron: '* * * * *', everyMs: 5000, type: 't' })).toMatch(/either cron or everyMs/);
    expect(refused('neither', { type: 't' })).toMatch(/either cron or everyMs/);
    expect(refused('bad', { cron: 'every tuesday', type: 't' })).toMatch(/bad cron expression "every tuesday"/);
    expect(refused('range', { cron: '0 0 25 * * *', type: 't' })).toMatch(/bad cron expression/);
    expect(refused('zone', { cron: '* * * * *', timeZone: 'Mars/Olympus', type: 't' })).toMatch(/unknown time zone "Mars\/Olympus"/);
    expect(refused('fast', { everyMs: 999, type: 't' })).toMatch(/everyMs must be an integer from 1000/);
    expect(refused('mixed', { everyMs: 5000, timeZone: 'UTC', type: 't' })).toMatch(/timeZone applies to cron only/);
    expect(refused('window', { everyMs: 5000, type: 't', startAt: 2000, endAt: 1000 })).toMatch(/endAt must be after startAt/);
    expect(refused('type', { everyMs: 5000, type: 'has space' })).toMatch(/white space/);
    expect(refused('missed', { everyMs: 5000, type: 't', missedTicks: 'all' })).toMatch(/missedTicks/);
    expect(refused('bad@name', { everyMs: 5000, type: 't' })).toMatch(/the name must be/);
  });

  it('reads a cron expression of 5 fields, or 6 with seconds first, and nothing else (as the README says)', () => {
    const refused = (cron: string): string => {
      try {
        toDefinition('c', { cron, type: 't' }, MAX);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidScheduleError);
        return (error as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(cron)}`);
    };
    for (const cron of ['', '   ', '* * *', '5', '* * * *', '* * * * * * *', '@daily', '@hourly']) {
      expect(refused(cron)).toMatch(/bad cron expression .*5 fields, or 6 with seconds first/);
    }
    expect(toDefinition('c', { cron: ' 0  0 1 * 1 ', type: 't' }, MAX).cron).toBe(' 0  0 1 * 1 ');
    expect(toDefinition('c', { cron: '*/5 * * * * *', type: 't' }, MAX).cron).toBe('*/5 * * * * *');
    // A long expression is quoted by a prefix with its length, not whole.
    const message = refused('1'.repeat(100_000));
    expect(message.length).toBeLessThan(300);
    expect(message).toContain('(100000 characters)');
  });
});

describe('nextTick', () => {
  it('every N ms: on multiples since startAt (default the epoch), strictly after, none past endAt', () => {
    expect(nextTick(def({ everyMs: 5000, type: 't' }), 12_000)).toBe(15_000);
    expect(nextTick(def({ everyMs: 5000, type: 't' }), 15_000)).toBe(20_000);
    expect(nextTick(def({ everyMs: 5000, type: 't', startAt: 1_000 }), 0)).toBe(1_000);
    expect(nextTick(def({ everyMs: 5000, type: 't', startAt: 1_000 }), 1_000)).toBe(6_000);
    expect(nextTick(def({ everyMs: 5000, type: 't', endAt: 19_999 }), 15_000)).toBeNull();
  });

  it('cron with seconds, strictly after a time that is itself a tick', () => {
    const everySecond = def({ cron: '* * * * * *', type: 't' });
    expect(nextTick(everySecond, 1_000_500)).toBe(1_001_000);
    expect(nextTick(everySecond, 1_001_000)).toBe(1_002_000);
    expect(iso(nextTick(def({ cron: '0 */5 * * * *', type: 't' }), at('2026-01-01T10:02:00Z')))).toBe('2026-01-01T10:05:00.000Z');
  });

  it('in a time zone across DST: spring forward skips the missing hour, fall back runs the repeated hour once', () => {
    const daily230 = def({ cron: '0 30 2 * * *', timeZone: 'America/New_York', type: 't' });
    // 2026-03-08: clocks go from 02:00 EST to 03:00 EDT, so 02:30 does not exist that day.
    expect(iso(nextTick(daily230, at('2026-03-07T12:00:00Z')))).toBe('2026-03-08T07:30:00.000Z');
    expect(iso(nextTick(daily230, at('2026-03-08T07:30:00Z')))).toBe('2026-03-09T06:30:00.000Z');
    const daily130 = def({ cron: '0 30 1 * * *', timeZone: 'America/New_York', type: 't' });
    // 2026-11-01: 01:00-02:00 happens twice (EDT, then EST).
    const first = nextTick(daily130, at('2026-10-31T12:00:00Z'))!;
    expect(iso(first)).toBe('2026-11-01T05:30:00.000Z');
    expect(iso(nextTick(daily130, first))).toBe('2026-11-02T06:30:00.000Z');
  });
});

describe('lastTickBy (the run of a catch-up: the last missed tick)', () => {
  it('is the last tick at or before the time, not before the given tick, not after endAt', () => {
    const every5 = def({ everyMs: 5000, type: 't' });
    expect(lastTickBy(every5, 23_000, 5_000)).toBe(20_000);
    expect(lastTickBy(every5, 25_000, 5_000)).toBe(25_000);
    expect(lastTickBy(every5, 23_000, 20_000)).toBe(20_000);
    expect(lastTickBy(def({ everyMs: 5000, type: 't', endAt: 12_000 }), 23_000, 5_000)).toBe(10_000);
    const daily = def({ cron: '0 0 6 * * *', timeZone: 'America/New_York', type: 't' });
    // Three days missed: the last 06:00 New York time before now, not the first.
    expect(iso(lastTickBy(daily, at('2026-01-05T12:00:00Z'), at('2026-01-02T11:00:00Z')))).toBe('2026-01-05T11:00:00.000Z');
    expect(iso(lastTickBy(daily, at('2026-01-05T11:00:00Z'), at('2026-01-02T11:00:00Z')))).toBe('2026-01-05T11:00:00.000Z');
    expect(iso(lastTickBy(daily, at('2026-01-05T10:59:59.999Z'), at('2026-01-02T11:00:00Z')))).toBe('2026-01-04T11:00:00.000Z');
  });
});
