import type { Redis } from 'ioredis';
import type { Row } from './report';
import { payload, percentiles, sampleServer, until } from './stats';
import { costSince, markCost } from './cost';
import { historyBackendsCpu, type Observability } from './observability';
import type { Start, System } from './systems';

export interface Context {
  redis: Redis;
  quick: boolean;
  make: { ours: (observability?: Observability) => System; bullmq: () => System; bee: () => System; service: () => System };
}

export async function each(ctx: Context, fn: (system: System) => Promise<Row>, makers = [() => ctx.make.ours(), ctx.make.bullmq]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const make of makers) {
    await ctx.redis.flushall();
    const system = make();
    try {
      rows.push(await fn(system));
    } finally {
      await system.close();
    }
  }
  return rows;
}

/**
 * 1. Immediate: bulk submit, then one worker at concurrency 50 with a no-op handler; this library with
 * events and metrics on (streams, a listener of every event, Prometheus) and off (best of two runs each),
 * beside BullMQ and bee-queue.
 */
export function immediate(ctx: Context): Promise<Row[]> {
  const n = ctx.quick ? 10_000 : 50_000;
  // NOTE: the two settings run twice each, alternating, after a warm-up pass, and the better run of each is
  // reported: else the order of the runs (JIT warm-up, garbage of the run before) shows more than the setting.
  const small = ctx.quick ? 2000 : 5000;
  const on = () => ctx.make.ours('all');
  const off = () => ctx.make.ours('none');
  const everything = () => ctx.make.ours('everything');
  return each(ctx, (system) => processAll(ctx, system, small), [on, off])
    .then(() => each(ctx, (system) => processAll(ctx, system, n), [on, off, on, off, () => ctx.make.ours('history'), () => ctx.make.ours('history'), everything, everything, ctx.make.bullmq, ctx.make.bee]))
    .then(bestOfEach)
    .then(withOnOffRatio)
    .then((rows) => versus(rows, 'bee-queue'));
}

/** Keeps the best run (process rate) of each system, in the order they first ran. */
function bestOfEach(rows: Row[]): Row[] {
  const best = new Map<string, Row>();
  for (const row of rows) {
    const kept = best.get(row.system);
    if (!kept || (row.key?.value ?? 0) > (kept.key?.value ?? 0)) best.set(row.system, row);
  }
  return [...best.values()];
}

/** Submits `n` tasks, then processes them with one worker at concurrency 50. */
async function processAll(ctx: Context, system: System, n: number): Promise<Row> {
  const items = Array.from({ length: n }, (_, i) => ({ payload: payload(i), delay: 0 }));
  const mark = await markCost(ctx.redis);
  const pg0 = system.flushHistory ? await historyBackendsCpu() : 0;
  const t0 = performance.now();
  await system.submit(items);
  const submitted = performance.now();
  let done = 0;
  let first = 0;
  // NOTE: the process rate counts from the first task start: worker start-up (Nest bootstrap,
  // connections) is not processing.
  await system.work(50, () => {
    if (done++ === 0) first = performance.now();
  });
  await until(() => done >= n, 120_000, 1);
  const t1 = performance.now();
  // NOTE: after the timing, with the history on: the cost counts until the run's rows are written (the
  // writer's work, and the PostgreSQL backends' CPU for them).
  await system.flushHistory?.();
  const cost = await costSince(ctx.redis, mark, n);
  if (system.flushHistory) cost.pgCpuS = (await historyBackendsCpu()) - pg0;
  return {
    workload: `1. immediate ${n}`,
    system: system.name,
    figures: {
      'submit/s': Math.round(n / ((submitted - t0) / 1000)),
      'process/s': Math.round(n / ((t1 - first) / 1000)),
      'cmds/task': (cost.calls / n).toFixed(1),
      'node CPU s': cost.nodeCpuS.toFixed(1),
      'redis CPU s': cost.redisCpuS.toFixed(1),
    },
    cost,
    key: { name: 'process/s', value: n / ((t1 - first) / 1000) },
  };
}

/**
 * Adds to the events+metrics-on row, the history row and the everything-on row, its process rate as a share of
 * the off row's (the cost of observing, of keeping the history).
 */
function withOnOffRatio(rows: Row[]): Row[] {
  const [on, off, ...rest] = rows;
  if (!off?.key) return rows;
  for (const row of [on, ...rest.filter((r) => r.system.startsWith('this library'))]) if (row?.key) row.figures['vs off'] = `${Math.round((100 * row.key.value) / off.key.value)} %`;
  return rows;
}

/**
 * Adds to this library's rows their key figure as a ratio to the `peer` system's in the same workload
 * (`vs <peer>`, above 1 better), beside the table's own column against BullMQ.
 */
export function versus(rows: Row[], peer: string): Row[] {
  for (const row of rows) {
    const other = rows.find((r) => r.workload === row.workload && r.system === peer && r.key?.name === row.key?.name);
    if (!row.system.startsWith('this library') || !row.key || !other?.key || other.key.value === 0 || row.key.value === 0) continue;
    const value = row.key.lowerIsBetter ? other.key.value / row.key.value : row.key.value / other.key.value;
    row.figures[`vs ${peer}`] = `${value.toFixed(2)}×`;
  }
  return rows;
}

function lateness(starts: Start[], n: number, submittedAt: number) {
  const distinct = new Set(starts.map((s) => s.id)).size;
  const late = starts.map((s) => s.at - s.dueAt);
  const after = starts.filter((s) => s.dueAt > submittedAt).map((s) => s.at - s.dueAt);
  return {
    all: percentiles(late),
    after: percentiles(after),
    early: late.filter((l) => l < 0).length,
    missing: n - distinct,
    duplicated: starts.length - distinct,
  };
}

/**
 * 2. Delayed: tasks due uniformly over the next seconds; lateness of handler start against due time. Also
 * service mode: the scheduler calling two application instances over HTTP; beside BullMQ and bee-queue.
 */
export function delayed(ctx: Context): Promise<Row[]> {
  const n = ctx.quick ? 5000 : 20_000;
  const spreadMs = ctx.quick ? 3000 : 10_000;
  return each(ctx, async (system) => {
    const starts: Start[] = [];
    const mark = await markCost(ctx.redis);
    await system.work(50, (s) => {
      starts.push(s);
    });
    const items = Array.from({ length: n }, (_, i) => ({ payload: payload(i), delay: Math.floor((i / n) * spreadMs) }));
    await system.submit(items);
    const submittedAt = Date.now();
    await until(() => starts.length >= n, spreadMs + 30_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const cost = await costSince(ctx.redis, mark, n);
    const r = lateness(starts, n, submittedAt);
    return {
      cost,
      workload: `2. delayed ${n} over ${spreadMs / 1000} s`,
      system: system.name,
      figures: {
        'late p50/p99/max ms (all)': `${r.all.p50}/${r.all.p99}/${r.all.max}`,
        'late p50/p99/max ms (due after submit)': `${r.after.p50}/${r.after.p99}/${r.after.max}`,
        early: r.early,
        missing: r.missing,
        duplicated: r.duplicated,
      },
      key: { name: 'p99 lateness (all)', value: r.all.p99, lowerIsBetter: true },
    };
  }, [() => ctx.make.ours(), ctx.make.service, ctx.make.bullmq, ctx.make.bee]).then((rows) => versus(rows, 'bee-queue'));
}

/** 4. Memory: Redis bytes per pending delayed task. */
export function memory(ctx: Context): Promise<Row[]> {
  const n = ctx.quick ? 20_000 : 100_000;
  return each(ctx, async (system) => {
    const before = await sampleServer(ctx.redis);
    await system.submit(Array.from({ length: n }, (_, i) => ({ payload: payload(i), delay: 3_600_000 })));
    const after = await sampleServer(ctx.redis);
    const perTask = (after.memory - before.memory) / n;
    return {
      workload: `4. memory, ${n} pending delayed`,
      system: system.name,
      figures: { 'bytes/task': Math.round(perTask) },
      key: { name: 'bytes/task', value: perTask, lowerIsBetter: true },
    };
  });
}

/** Tasks submitted per call in workload 6 (the items of one call are built just before it). */
const SCALE_CHUNK = 200_000;

/**
 * 6. Scale: many pending delayed tasks; submit rate, memory, counts and the first page, lateness of tasks due
 * meanwhile. `--scale-tasks=N` sets how many (default 1,000,000; 100,000 with --quick). Above 1,000,000 only
 * this library runs: BullMQ's 850 bytes and 22,000 submits/s a task would take 8.5 GB and 8 minutes at 10M.
 */
export function scale(ctx: Context): Promise<Row[]> {
  const given = Number(process.argv.find((a) => a.startsWith('--scale-tasks='))?.slice(14));
  const n = Number.isInteger(given) && given > 0 ? given : ctx.quick ? 100_000 : 1_000_000;
  const probes = 2000;
  const makers = n > 1_000_000 ? [() => ctx.make.ours()] : undefined;
  return each(ctx, async (system) => {
    const before = await sampleServer(ctx.redis);
    const t0 = performance.now();
    for (let from = 0; from < n; from += SCALE_CHUNK) {
      const size = Math.min(SCALE_CHUNK, n - from);
      await system.submit(Array.from({ length: size }, (_, j) => ({ payload: payload(from + j), delay: 3_600_000 + from + j })));
    }
    const seconds = (performance.now() - t0) / 1000;
    const after = await sampleServer(ctx.redis);
    const inspections: number[] = [];
    for (let i = 0; i < 5; i++) {
      const at = performance.now();
      await system.inspect();
      inspections.push(performance.now() - at);
    }
    const starts: Start[] = [];
    await system.work(50, (s) => {
      starts.push(s);
    });
    await system.submit(Array.from({ length: probes }, (_, i) => ({ payload: payload(i), delay: 500 + Math.floor((i / probes) * 3000) })));
    const submittedAt = Date.now();
    await until(() => starts.length >= probes, 60_000);
    const r = lateness(starts, probes, submittedAt);
    return {
      workload: `6. scale: ${n} pending + ${probes} due over 3 s`,
      system: system.name,
      figures: {
        'submit/s': Math.round(n / seconds),
        'bytes/task': Math.round((after.memory - before.memory) / n),
        'counts+page ms': percentiles(inspections).p50.toFixed(1),
        'late p50/p99/max ms': `${r.all.p50}/${r.all.p99}/${r.all.max}`,
        early: r.early,
        missing: r.missing,
      },
      key: { name: 'submit/s', value: n / seconds },
    };
  }, makers);
}
