import { backoffDelay } from './backoff';

describe('backoffDelay', () => {
  const exp = { type: 'exponential' as const, delayMs: 100, maxDelayMs: 1000, jitter: 0 };
  it('doubles per retry up to the cap', () => {
    expect([1, 2, 3, 4, 5, 60].map((n) => backoffDelay(exp, n))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
  it('keeps a fixed delay', () => {
    expect(backoffDelay({ ...exp, type: 'fixed' }, 7)).toBe(100);
  });
  it('draws jitter from [d (1 - jitter), d]', () => {
    const jittered = { ...exp, jitter: 0.5 };
    expect(backoffDelay(jittered, 1, () => 0)).toBe(100);
    expect(backoffDelay(jittered, 1, () => 0.999999)).toBe(50);
  });
});
