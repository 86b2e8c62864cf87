import type { Row } from './report';
import { payload, percentiles } from './stats';
import { costSince, markCost } from './cost';
import type { Context } from './workloads';
import type { System } from './systems';

/**
 * Round trips before the measured ones. A process that has just started spends its first round trips
 * compiling the path: V8's optimising compiler runs on helper threads, which on two cores hold a core for
 * milliseconds while Redis waits to run (`perf sched`), and 88 functions were still being optimised
 * during the 2,000 after 300 warm-up round trips (37 after 3,000). A service at low load has long run its
 * path; this measures that state, and reports the warm-up beside it.
 */
const WARM_UP = 1000;
/** The first round trips, left out of the warm-up's figures too: connections and first calls. */
const FIRST = 50;

/**
 * 7. Round trip at low load: one immediate task at a time, from submit to its handler's start, timed in
 * this process (producer and worker both run here, for both systems). The first `WARM_UP` are reported
 * apart (after the first `FIRST`).
 */
export async function roundTrip(ctx: Context, each: (fn: (system: System) => Promise<Row>) => Promise<Row[]>): Promise<Row[]> {
  const n = ctx.quick ? 500 : 2000;
  const warmUp = ctx.quick ? 200 : WARM_UP;
  return each(async (system) => {
    let started: (() => void) | undefined;
    await system.work(50, () => started?.());
    const times: number[] = [];
    let mark = await markCost(ctx.redis);
    for (let i = 0; i < warmUp + n; i++) {
      if (i === warmUp) mark = await markCost(ctx.redis);
      const t0 = performance.now();
      await new Promise<void>((resolve, reject) => {
        started = resolve;
        system.submit([{ payload: payload(i), delay: 0 }]).catch(reject);
      });
      times.push(performance.now() - t0);
    }
    const cost = await costSince(ctx.redis, mark, n);
    const p = percentiles(times.slice(warmUp));
    const cold = percentiles(times.slice(FIRST, warmUp));
    return {
      workload: `7. round trip, ${n} tasks one at a time`,
      system: system.name,
      figures: {
        'submit→start p50/p99/max ms': `${p.p50}/${p.p99}/${p.max}`,
        [`warm-up (${warmUp - FIRST}) p50/p99/max ms`]: `${cold.p50}/${cold.p99}/${cold.max}`,
      },
      key: { name: 'p99 round trip', value: p.p99, lowerIsBetter: true },
      cost,
    };
  });
}
