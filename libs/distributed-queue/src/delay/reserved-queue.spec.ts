import { PREFETCH_STALL_MS } from '../runtime/prefetch';
import type { Reservation } from './delay-queue.store';
import { ReservedQueue, type Held } from './reserved-queue';

const reservation = (id: string): Reservation => ({ id, attempt: 1, token: `k-${id}`, dueAt: 0, payload: '{}' });

describe('ReservedQueue stall watch', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  function queue() {
    const stalls: Held[][] = [];
    const q = new ReservedQueue(4, (stalled) => stalls.push(stalled));
    return { q, stalls };
  }

  it('hands the waiting tasks back once no slot freed for PREFETCH_STALL_MS', () => {
    const { q, stalls } = queue();
    q.recordDuration(0);
    q.push([reservation('a'), reservation('b')]);
    jest.advanceTimersByTime(PREFETCH_STALL_MS - 1);
    expect(stalls).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(stalls).toEqual([[['a', 'k-a'], ['b', 'k-b']]]);
    expect(q.size).toBe(0);
    expect(q.extra).toBe(0); // nothing ahead until a handler finishes again
  });

  it('counts the stall from the last freed slot, not a whole period more', () => {
    const { q, stalls } = queue();
    q.push([reservation('a'), reservation('b')]);
    jest.advanceTimersByTime(40);
    expect(q.shift(1).map((r) => r.id)).toEqual(['a']); // a slot freed at +40
    jest.advanceTimersByTime(PREFETCH_STALL_MS - 1); // +139: 99 ms since that slot
    expect(stalls).toEqual([]);
    jest.advanceTimersByTime(1); // +140: 100 ms since it (was: the next check at +200)
    expect(stalls).toEqual([[['b', 'k-b']]]);
  });

  it('does not hand back while slots keep freeing', () => {
    const { q, stalls } = queue();
    q.push(['a', 'b', 'c', 'd', 'e'].map(reservation));
    for (let i = 0; i < 4; i++) {
      jest.advanceTimersByTime(PREFETCH_STALL_MS - 10);
      q.shift(1);
    }
    expect(stalls).toEqual([]);
    expect(q.size).toBe(1);
  });
});
