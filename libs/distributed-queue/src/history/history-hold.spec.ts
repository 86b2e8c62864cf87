import type { StreamEntry } from '../events/stream-entry';
import { HistoryHold, type EntryToWrite } from './history-hold';

const submit = (id: string, ...ids: string[]): StreamEntry => [id, ['e', 'submitted', 'ids', JSON.stringify(ids), 'b', JSON.stringify(ids.map(() => '{}'))]];
const submitDue = (id: string, due: number, ...ids: string[]): StreamEntry => [id, ['e', 'submitted', 'ids', JSON.stringify(ids), 'due', JSON.stringify(ids.map(() => due))]];
const event = (id: string, e: string, ...ids: string[]): StreamEntry => [id, ['e', e, 'ids', JSON.stringify(ids), 'a', JSON.stringify(ids.map(() => 1))]];
const routed = (id: string, e: string, tasks: [string, string][]): StreamEntry => [id, ['e', e, 'ids', JSON.stringify(tasks.map((t) => t[1])), 't', JSON.stringify(tasks.map((t) => t[0]))]];
/** The entries written, as `<entry id>:<mask>` ('' for the whole entry). */
const written = (entries: EntryToWrite[]) => entries.map((e) => `${e.held.entry[0]}:${e.only}`);

describe('HistoryHold', () => {
  it('holds unfinished submitted tasks; a task that ends is written once, from its submit to its end', () => {
    const hold = new HistoryHold();
    hold.cursor = '5-0';
    const first = hold.take([submit('10-0', 'a', 'b'), event('11-0', 'started', 'a')], 60_000, false);
    expect(written(first.entries)).toEqual([]);
    expect(first.position).toBe('5-0');
    expect(hold.holding).toBe(2);
    const second = hold.take([event('12-0', 'completed', 'a')], 60_000, false);
    // a's submit (not b's), its start and its end
    expect(written(second.entries)).toEqual(['10-0:10', '11-0:', '12-0:']);
    // b still held: the position stays before its submit
    expect(second.position).toBe('5-0');
    expect(hold.cursor).toBe('12-0');
    expect(hold.holding).toBe(1);
  });

  it('events of tasks not held are written at once; the position is before the oldest task held', () => {
    const hold = new HistoryHold();
    const plan = hold.take([submit('1-0', 'a'), submit('2-0', 'b'), event('3-0', 'completed', 'x'), event('4-0', 'completed', 'a')], 60_000, false);
    expect(written(plan.entries)).toEqual(['1-0:', '3-0:', '4-0:']);
    expect(plan.position).toBe('1-0');
    const rest = hold.take([event('5-0', 'completed', 'b')], 60_000, false);
    expect(written(rest.entries)).toEqual(['2-0:', '5-0:']);
    expect(rest.position).toBe('5-0');
    expect(hold.holding).toBe(0);
  });

  it('a task due after the window is not held; one without a due time, or due within it, is', () => {
    const hold = new HistoryHold();
    const plan = hold.take([submitDue('1-0', Date.now() + 120_000, 'far'), submitDue('2-0', Date.now() + 1000, 'soon'), submit('3-0', 'plain')], 60_000, false);
    expect(written(plan.entries)).toEqual(['1-0:']);
    expect(hold.holding).toBe(2);
  });

  it('force, an expired window and the cap write what is held', () => {
    const forced = new HistoryHold();
    expect(written(forced.take([submit('1-0', 'a')], 60_000, true).entries)).toEqual(['1-0:']);
    expect(forced.holding).toBe(0);
    expect(written(new HistoryHold().take([submit('1-0', 'a')], 0, false).entries)).toEqual(['1-0:']);
    const capped = new HistoryHold(true, 2);
    const plan = capped.take([submit('1-0', 'a'), submit('2-0', 'b'), submit('3-0', 'c')], 60_000, false);
    // the oldest past the cap
    expect(written(plan.entries)).toEqual(['1-0:']);
    expect(plan.position).toBe('1-0');
    expect(capped.holding).toBe(2);
  });

  it('a stream whose tasks end elsewhere holds nothing back', () => {
    const hold = new HistoryHold(false);
    expect(written(hold.take([submit('1-0', 'a')], 60_000, false).entries)).toEqual(['1-0:']);
    expect(hold.holding).toBe(0);
  });

  it('route partitions: tasks are told apart by type and id', () => {
    const hold = new HistoryHold();
    hold.take([routed('1-0', 'submitted', [['pay', 'x'], ['ship', 'x']])], 60_000, false);
    const plan = hold.take([routed('2-0', 'completed', [['pay', 'x']])], 60_000, false);
    expect(written(plan.entries)).toEqual(['1-0:10', '2-0:']);
    expect(hold.holding).toBe(1);
  });

  it('an entry with no events, or an unreadable one, moves the position when nothing is held', () => {
    const hold = new HistoryHold();
    const plan = hold.take([['1-0', ['e', 'progress', 'ids', 'not json']]], 60_000, false);
    expect(written(plan.entries)).toEqual(['1-0:']);
    expect(plan.position).toBe('1-0');
  });

  it('reset forgets what was read and held', () => {
    const hold = new HistoryHold();
    hold.take([submit('1-0', 'a')], 60_000, false);
    hold.reset();
    expect(hold.holding).toBe(0);
    expect(hold.cursor).toBeUndefined();
  });
});
