import type { StreamEntry } from '../events/stream-entry';
import { StreamCopyState } from './history-coalescer';
import { decodeEntries } from './history-decode';

const submit = (id: string, ...ids: string[]): StreamEntry => [id, ['e', 'submitted', 'ids', JSON.stringify(ids), 'b', JSON.stringify(ids.map(() => '{}'))]];
const event = (id: string, e: string, ...ids: string[]): StreamEntry => [id, ['e', e, 'ids', JSON.stringify(ids), 'a', JSON.stringify(ids.map(() => 1))]];
const from = { type: 'mail' };
/** Plans `entries` as the writer does: decoded from the stream of type mail. */
const planOf = (state: StreamCopyState, entries: StreamEntry[], coalesceMs: number, force: boolean) => state.plan(decodeEntries(entries, from), coalesceMs, force);
const statuses = (plan: { patches: { id: string; status: string }[] }) => plan.patches.map((p) => `${p.id}:${p.status}`);

describe('StreamCopyState', () => {
  it('holds unfinished submitted tasks; a task that ends is written once, finished', () => {
    const state = new StreamCopyState();
    state.cursor = '5-0';
    const first = planOf(state, [submit('10-0', 'a', 'b'), event('11-0', 'started', 'a')], 60_000, false);
    expect(first.patches).toEqual([]);
    expect(first.position).toBe('5-0');
    expect(state.holding).toBe(2);
    const second = planOf(state, [event('12-0', 'completed', 'a')], 60_000, false);
    expect(statuses(second)).toEqual(['a:done']);
    expect(second.patches[0]).toMatchObject({ submitted: true, body: '{}', lastEntry: '12-0' });
    // b still held: the position stays before its submit.
    expect(second.position).toBe('5-0');
    expect(state.cursor).toBe('12-0');
  });

  it('the position is before the oldest task still held; events of unknown tasks are written at once', () => {
    const state = new StreamCopyState();
    const plan1 = planOf(state, [submit('1-0', 'a'), submit('2-0', 'b'), event('3-0', 'completed', 'x')], 60_000, false);
    expect(statuses(plan1)).toEqual(['x:done']);
    expect(plan1.position).toBe('0-0');
    const plan2 = planOf(state, [event('4-0', 'cancelled', 'a')], 60_000, false);
    expect(statuses(plan2)).toEqual(['a:cancelled']);
    expect(plan2.position).toBe('1-0');
    const plan3 = planOf(state, [event('5-0', 'cancelled', 'b')], 60_000, false);
    expect(plan3.position).toBe('5-0');
    expect(state.holding).toBe(0);
  });

  it('writes what is held when forced, when held past coalesceMs (0: at once), or past the cap (oldest first)', () => {
    const forced = new StreamCopyState();
    planOf(forced, [submit('1-0', 'a')], 60_000, false);
    expect(statuses(planOf(forced, [], 60_000, true))).toEqual(['a:waiting']);
    expect(statuses(planOf(new StreamCopyState(), [submit('1-0', 'a')], 0, false))).toEqual(['a:waiting']);
    const capped = new StreamCopyState(2);
    const plan = planOf(capped, [submit('1-0', 'a', 'b', 'c')], 60_000, false);
    expect(statuses(plan)).toEqual(['a:waiting']);
    expect(capped.holding).toBe(2);
  });

  it('skips malformed events (named), keeps the rest; reset forgets the cursor and what is held', () => {
    const state = new StreamCopyState();
    const plan = planOf(state, [[ '1-0', ['e', 'submitted', 'ids', '["bad"]', 'due', '["x"]']], event('2-0', 'completed', 'ok')], 60_000, false);
    expect(plan.skipped.map((s) => s.problem)).toEqual(['has a dueAt that is not an integer']);
    expect(statuses(plan)).toEqual(['ok:done']);
    planOf(state, [submit('3-0', 'h')], 60_000, false);
    state.reset();
    expect(state.holding).toBe(0);
    expect(state.cursor).toBeUndefined();
  });
});
