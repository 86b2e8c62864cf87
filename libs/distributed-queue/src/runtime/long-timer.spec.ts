import { MAX_TIMER_MS, setLongTimeout } from './long-timer';

describe('setLongTimeout', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('waits delays past 2^31-1 ms in capped steps, without firing early', () => {
    const fn = jest.fn();
    const spy = jest.spyOn(global, 'setTimeout');
    setLongTimeout(fn, 30 * 24 * 3600_000);
    for (const call of spy.mock.calls) expect(call[1]).toBeLessThanOrEqual(MAX_TIMER_MS);
    jest.advanceTimersByTime(29 * 24 * 3600_000);
    expect(fn).not.toHaveBeenCalled();
    expect(spy.mock.calls.length).toBeLessThan(5);
    jest.advanceTimersByTime(24 * 3600_000);
    expect(fn).toHaveBeenCalledTimes(1);
    spy.mockRestore();
  });

  it('clear() stops it between steps', () => {
    const fn = jest.fn();
    const t = setLongTimeout(fn, 3 * MAX_TIMER_MS);
    jest.advanceTimersByTime(MAX_TIMER_MS + 5);
    t.clear();
    jest.advanceTimersByTime(3 * MAX_TIMER_MS);
    expect(fn).not.toHaveBeenCalled();
  });

  it('fires short delays once', () => {
    const fn = jest.fn();
    setLongTimeout(fn, 10);
    jest.advanceTimersByTime(10);
    expect(fn).toHaveBeenCalledTimes(1);
  });
});
