import { PrefetchAllowance, PREFETCH_MAX, PREFETCH_WAIT_MS } from './prefetch';

describe('PrefetchAllowance', () => {
  it('allows nothing ahead until a handler has finished', () => {
    expect(new PrefetchAllowance(50).extra).toBe(0);
  });

  it('allows PREFETCH_MAX times concurrency ahead while handlers are quick, less as they slow, none when slow', () => {
    const quick = new PrefetchAllowance(50);
    quick.record(0);
    expect(quick.extra).toBe(50 * PREFETCH_MAX);
    const half = new PrefetchAllowance(50);
    half.record(PREFETCH_WAIT_MS);
    expect(half.extra).toBe(50); // each waits about PREFETCH_WAIT_MS
    const slower = new PrefetchAllowance(50);
    slower.record(PREFETCH_WAIT_MS * 5);
    expect(slower.extra).toBe(10); // each waits about PREFETCH_WAIT_MS for its slot
    const slow = new PrefetchAllowance(50);
    slow.record(PREFETCH_WAIT_MS * 100);
    expect(slow.extra).toBe(0);
  });

  it('follows a running mean: one slow handler among quick ones does not stop it', () => {
    const allowance = new PrefetchAllowance(10);
    for (let i = 0; i < 20; i++) allowance.record(0);
    allowance.record(10);
    expect(allowance.extra).toBe(20); // mean 1 ms: each of 20 ahead waits about 2 ms
    for (let i = 0; i < 30; i++) allowance.record(100);
    expect(allowance.extra).toBe(0);
  });
});
