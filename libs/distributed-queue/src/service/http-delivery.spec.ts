import { MAX_STACK_BYTES } from '../runtime/error-stack';
import { failedDelivery, pickInstance } from './http-delivery';
import { splitBatches } from './split-batches';

describe('pickInstance', () => {
  const instances = ['a', 'b', 'c'];

  it('sends each next attempt of a task to the next instance, wrapping around', () => {
    const first = instances.indexOf(pickInstance(instances, 'order-7', 1)!);
    expect(pickInstance(instances, 'order-7', 2)).toBe(instances[(first + 1) % 3]);
    expect(pickInstance(instances, 'order-7', 3)).toBe(instances[(first + 2) % 3]);
    expect(pickInstance(instances, 'order-7', 4)).toBe(instances[first]);
  });

  it('spreads first attempts over every instance; none without instances', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 3000; i++) {
      const picked = pickInstance(instances, `t${i}`, 1)!;
      counts.set(picked, (counts.get(picked) ?? 0) + 1);
    }
    for (const name of instances) expect(counts.get(name)).toBeGreaterThan(800);
    expect(pickInstance([], 'x', 1)).toBeUndefined();
  });
});

describe('pickInstance with an instance to avoid', () => {
  it('takes the next instance instead, unless it is the only one', () => {
    const instances = ['a', 'b', 'c'];
    const usual = pickInstance(instances, 'order-7', 2)!;
    const next = instances[(instances.indexOf(usual) + 1) % 3];
    expect(pickInstance(instances, 'order-7', 2, (i) => i === usual)).toBe(next);
    expect(pickInstance(['a'], 'order-7', 2, (i) => i === 'a')).toBe('a');
  });
});

describe('splitBatches', () => {
  const sized = (...bytes: number[]) => bytes.map((b, i) => ({ i, bytes: b }));
  /** The body size of a batch: `{"deliveries":[` + tasks joined by commas + `]}`. */
  const body = (batch: { bytes: number }[]) => 17 + batch.reduce((sum, t) => sum + t.bytes, 0) + batch.length - 1;

  it('keeps every request within the byte limit and the count, in order', () => {
    const items = sized(...Array.from({ length: 150 }, () => 60_000));
    const batches = splitBatches(items, 100, 4 * 1024 * 1024);
    expect(batches.flat()).toEqual(items);
    for (const batch of batches) expect(body(batch)).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(batches.map((b) => b.length)).toEqual([69, 69, 12]);
    expect(splitBatches(sized(...Array.from({ length: 250 }, () => 10)), 100, 1e9).map((b) => b.length)).toEqual([100, 100, 50]);
  });

  it('fills a request up to exactly the limit; a task too big alone gets its own', () => {
    expect(splitBatches(sized(40, 40, 40), 100, 17 + 81).map((b) => b.length)).toEqual([2, 1]);
    expect(splitBatches(sized(10, 500, 10), 100, 100).map((b) => b.map((t) => t.i))).toEqual([[0], [1], [2]]);
  });
});

describe('failedDelivery', () => {
  it("keeps the application's stack, bounded again (an instance of another version may send any size), and none when it sent none", () => {
    const stack = ['Error: no stock', ...Array.from({ length: 5000 }, (_, i) => `    at f${i} (/app.ts:${i}:1)`)].join('\n');
    const error = failedDelivery('shop', 'i1', { i: 0, status: 500, error: { name: 'Error', message: 'no stock', stack } });
    expect(error).toMatchObject({ app: 'shop', instance: 'i1', status: 500, message: 'Delivery to "shop" instance i1 failed with HTTP 500: Error: no stock' });
    expect(Buffer.byteLength(error.remoteStack!)).toBeLessThanOrEqual(MAX_STACK_BYTES);
    expect(error.remoteStack).toMatch(/^Error: no stock\n {4}at f0 [^]*\n {4}\.\.\. \d+ more lines$/);
    const short = failedDelivery('shop', 'i1', { i: 0, status: 500, error: { name: 'Error', message: 'x', stack: 'Error: x\n    at g' } });
    expect(short.remoteStack).toBe('Error: x\n    at g');
    expect(failedDelivery('shop', 'i1', { i: 0, status: 504, error: { name: 'TaskTimeoutError', message: 't' } }).remoteStack).toBeUndefined();
    expect(failedDelivery('shop', 'i1', { i: 0, status: 500, error: { name: 'E', message: 'm', stack: 42 as unknown as string } }).remoteStack).toBeUndefined();
  });
});
