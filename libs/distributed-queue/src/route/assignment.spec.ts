import { planAssignment } from './assignment';

const counts = (plan: (string | undefined)[]) =>
  plan.reduce<Record<string, number>>((acc, m) => ({ ...acc, [m ?? '-']: (acc[m ?? '-'] ?? 0) + 1 }), {});

describe('planAssignment', () => {
  it('assigns nothing without machines', () => {
    expect(planAssignment(4, [], ['a', 'b', undefined, 'a'])).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('spreads N partitions over M machines as floor/ceil of N/M', () => {
    for (const [n, m] of [[8, 3], [8, 1], [3, 5], [64, 7], [16, 4]]) {
      const machines = Array.from({ length: m }, (_, i) => `m${i}`);
      const plan = planAssignment(n, machines, []);
      const sizes = machines.map((x) => counts(plan)[x] ?? 0);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(Math.ceil(n / m));
      expect(Math.min(...sizes)).toBeGreaterThanOrEqual(Math.floor(n / m));
      expect(plan.every((x) => x !== undefined)).toBe(true);
    }
  });

  it('keeps owners in place when balanced and moves only what must move', () => {
    const current = ['a', 'a', 'a', 'a', 'b', 'b', 'b', 'b'];
    expect(planAssignment(8, ['a', 'b'], current)).toEqual(current);
    const joined = planAssignment(8, ['a', 'b', 'c'], current);
    expect(joined.filter((m, p) => m !== current[p])).toHaveLength(2);
    expect(counts(joined)).toEqual({ a: 3, b: 3, c: 2 });
  });

  it('gives the partitions of a dead machine to the live ones', () => {
    const plan = planAssignment(6, ['a', 'c'], ['a', 'b', 'c', 'a', 'b', 'c']);
    expect(plan[0]).toBe('a');
    expect(plan[2]).toBe('c');
    expect(counts(plan)).toEqual({ a: 3, c: 3 });
  });
});
