import { SharedTimeouts } from './shared-timeouts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('SharedTimeouts', () => {
  it('fires every timeout after its full length, never early, and shares timers among those set together', async () => {
    const timeouts = new SharedTimeouts(40);
    const spy = jest.spyOn(global, 'setTimeout');
    const fired: number[] = [];
    const set: number[] = [];
    for (let i = 0; i < 500; i++) {
      set.push(performance.now());
      timeouts.add(() => fired.push(performance.now() - set[i]));
    }
    const timers = spy.mock.calls.length;
    spy.mockRestore();
    expect(timers).toBeLessThan(10);
    await sleep(120);
    expect(fired).toHaveLength(500);
    expect(Math.min(...fired)).toBeGreaterThanOrEqual(39.5);
  });

  it('a cleared timeout never fires; clearing a whole group leaves the rest alone', async () => {
    const timeouts = new SharedTimeouts(20);
    const fired: string[] = [];
    const a = timeouts.add(() => fired.push('a'));
    const b = timeouts.add(() => fired.push('b'));
    await sleep(5);
    const c = timeouts.add(() => fired.push('c'));
    a.clear();
    a.clear();
    b.clear();
    await sleep(60);
    expect(fired).toEqual(['c']);
    c.clear();
  });

  it('a timeout set late in its group is not fired early when the group fires', async () => {
    const timeouts = new SharedTimeouts(30);
    const t0 = performance.now();
    let second = 0;
    timeouts.add(() => undefined);
    // NOTE: busy for 0.9 ms, within the group's span: the second joins the first's group.
    while (performance.now() - t0 < 0.9) void 0;
    const at = performance.now();
    timeouts.add(() => (second = performance.now() - at));
    await sleep(80);
    expect(second).toBeGreaterThanOrEqual(29.5);
  });
});
