import { hashSlot, SLOTS, spreadSuffix } from './slot-spread';

// NOTE: ioredis's own slot function (a dependency of ioredis) is the reference.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const referenceSlot = require('cluster-key-slot') as (key: string) => number;

const slots = Array.from({ length: 300 }, (_, p) => hashSlot(`{q:${p}:${spreadSuffix(`q:${p}`, p)}}`));

/** How many of partitions 0..n-1 land on each of `masters` equal slot ranges. */
function perMaster(n: number, masters: number): number[] {
  const counts = new Array<number>(masters).fill(0);
  for (let p = 0; p < n; p++) counts[Math.min(masters - 1, Math.floor((slots[p] * masters) / SLOTS))]++;
  return counts;
}

describe('slot spread', () => {
  it('hashSlot agrees with ioredis, hash tags included', () => {
    const keys = ['', 'a', 'foo', '{user1000}.following', 'foo{{bar}}zap', '{}x', 'ü{ñ}', ...Array.from({ length: 500 }, (_, i) => `k:${i * 7919}:${'x'.repeat(i % 13)}`)];
    for (const key of keys) expect(hashSlot(key)).toBe(referenceSlot(key));
    // NOTE: Redis hashes the whole key when the first '{' is followed at once by '}' (cluster-key-slot does not).
    expect(hashSlot('foo{}{bar}')).toBe(8363);
  });

  it('partitions go round-robin over 3 equal masters: every count from 1 to 300 within one of a third', () => {
    for (let n = 1; n <= 300; n++) {
      const counts = perMaster(n, 3);
      expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
    }
    expect(perMaster(12, 3)).toEqual([4, 4, 4]);
  });

  it('6 and 9 masters get no more than a fair share plus one', () => {
    for (const masters of [6, 9]) {
      for (const n of [9, 12, 18, 27, 64, 100]) {
        expect(Math.max(...perMaster(n, masters))).toBeLessThanOrEqual(Math.ceil(n / masters) + 1);
      }
    }
  });

  it('the suffix depends on the partition only, and is the same every time', () => {
    expect(spreadSuffix('q:7', 7)).toBe(spreadSuffix('q:7', 7));
    const first = Array.from({ length: 20 }, (_, p) => spreadSuffix(`pre:ledger:${p}`, p));
    expect(Array.from({ length: 20 }, (_, p) => spreadSuffix(`pre:ledger:${p}`, p))).toEqual(first);
  });
});
