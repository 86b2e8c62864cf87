import { Slots } from './slots';

describe('Slots', () => {
  it('grants at most size at once, then serves waiters first come first served', async () => {
    const slots = new Slots(2);
    const signal = new AbortController().signal;
    expect(await slots.acquire(signal)).toBe(true);
    expect(await slots.acquire(signal)).toBe(true);
    const order: number[] = [];
    const waits = [1, 2, 3].map((n) => slots.acquire(signal).then((ok) => ok && order.push(n)));
    await Promise.resolve();
    expect(order).toEqual([]);
    slots.release();
    slots.release();
    slots.release();
    await Promise.all(waits);
    expect(order).toEqual([1, 2, 3]);
  });

  it('a waiter whose signal aborts leaves the queue without taking a slot', async () => {
    const slots = new Slots(1);
    const never = new AbortController().signal;
    expect(await slots.acquire(never)).toBe(true);
    const quit = new AbortController();
    const first = slots.acquire(quit.signal);
    const second = slots.acquire(never);
    quit.abort();
    expect(await first).toBe(false);
    slots.release();
    expect(await second).toBe(true);
    expect(await slots.acquire(quit.signal)).toBe(false);
  });

  it('tryAcquire takes a free slot at once, never ahead of a waiter', async () => {
    const slots = new Slots(1);
    const signal = new AbortController().signal;
    expect(slots.tryAcquire()).toBe(true);
    expect(slots.tryAcquire()).toBe(false);
    const waiter = slots.acquire(signal);
    slots.release();
    expect(slots.tryAcquire()).toBe(false);
    expect(await waiter).toBe(true);
  });

  it('every waiter of an aborted signal leaves; waiters of other signals keep their places', async () => {
    const slots = new Slots(1);
    const never = new AbortController().signal;
    expect(slots.tryAcquire()).toBe(true);
    const quit = new AbortController();
    const order: string[] = [];
    const waits = [
      slots.acquire(quit.signal).then((ok) => order.push(`a:${ok}`)),
      slots.acquire(never).then((ok) => order.push(`b:${ok}`)),
      slots.acquire(quit.signal).then((ok) => order.push(`c:${ok}`)),
      slots.acquire(never).then((ok) => order.push(`d:${ok}`)),
    ];
    quit.abort();
    await Promise.resolve();
    expect(order).toEqual(['a:false', 'c:false']);
    slots.release();
    slots.release();
    await Promise.all(waits);
    expect(order).toEqual(['a:false', 'c:false', 'b:true', 'd:true']);
    expect(slots.tryAcquire()).toBe(false);
  });
});
