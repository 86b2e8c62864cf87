import type { Row } from './report';
import { payload, percentiles } from './stats';
import type { Context } from './workloads';
import type { System } from './systems';

/**
 * 7. Round trip at low load: one immediate task at a time, from submit to its handler's start, timed in
 * this process (producer and worker both run here, for both systems). The first 50 warm up and are not counted.
 */
export async function roundTrip(ctx: Context, each: (fn: (system: System) => Promise<Row>) => Promise<Row[]>): Promise<Row[]> {
  const n = ctx.quick ? 500 : 2000;
  const warmUp = 50;
  return each(async (system) => {
    let started: (() => void) | undefined;
    await system.work(50, () => started?.());
    const times: number[] = [];
    for (let i = 0; i < warmUp + n; i++) {
      const t0 = performance.now();
      await new Promise<void>((resolve, reject) => {
        started = resolve;
        system.submit([{ payload: payload(i), delay: 0 }]).catch(reject);
      });
      if (i >= warmUp) times.push(performance.now() - t0);
    }
    const p = percentiles(times);
    return {
      workload: `7. round trip, ${n} tasks one at a time`,
      system: system.name,
      figures: { 'submit→start p50/p99/max ms': `${p.p50}/${p.p99}/${p.max}` },
      key: { name: 'p99 round trip', value: p.p99, lowerIsBetter: true },
    };
  });
}
