import { pickInstance } from './http-delivery';

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
