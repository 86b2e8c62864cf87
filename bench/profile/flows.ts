/**
 * `node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/profile/flows.ts [--count=1000]
 * [--rounds=2] [--cpu-prof] [--no-slowlog] [--one-at-a-time=N] [--concurrency=50] [--bullmq]`: workload 15 on
 * one system (this library unless --bullmq), after a pass of 100 flows. Each round runs
 * twice: as the benchmark does (workers first, the flows submitted at once), then in two phases (every flow
 * submitted before any worker runs; then the workers), so the submit's cost and the run's are told apart.
 * Every Redis call in SLOWLOG: per script (named by its SHA) the calls per flow and Redis's time per flow,
 * INFO commandstats per flow (the scripts' inner commands), Redis and Node CPU. With `--cpu-prof`, a V8 profile
 * of each span of the first round (this process runs producer and workers) and its heaviest functions. With
 * `--one-at-a-time=N`, first N flows one at a time on each system (this library, then BullMQ). `--concurrency`:
 * of each worker (50 in the benchmark). `--bullmq`: the rounds on BullMQ's FlowProducer instead.
 */
import 'reflect-metadata';
import { createHash } from 'crypto';
import * as fs from 'fs';
import { Session } from 'inspector';
import * as path from 'path';
import { Redis } from 'ioredis';
import { loadScripts } from 'nestjs-distributed-queue/redis/script-loader';
import { bull, now, ours, runOnce, type FlowSystem } from '../flows';
import { nodeCpu, percentiles, until } from '../stats';
import { arg, commandCosts, withServer } from './args-and-costs';
import { topSelfTime, topTotalTime } from './top';

type SlowEntry = [number, number, number, string[]];

const SLOWLOG = !process.argv.includes('--no-slowlog');
const SCRIPTS = new Map(loadScripts().map((s) => [createHash('sha1').update(s.lua).digest('hex'), s.command]));

function post<T>(session: Session, method: string): Promise<T> {
  return new Promise((resolve, reject) => session.post(method, (error, result) => (error ? reject(error) : resolve(result as T))));
}

/** Per script (or plain command sent by a client): calls and Redis µs per flow, µs per call, the largest. */
function byScript(entries: SlowEntry[], flows: number): string {
  const scripts = new Map<string, { calls: number; usec: number; max: number }>();
  // NOTE: SLOWLOG logs the commands a script runs too, after it: those are counted by commandstats instead.
  let inScript = 0;
  for (const [, , usec, args] of [...entries].reverse()) {
    const command = args[0].toLowerCase();
    const isScript = command === 'evalsha' || command === 'eval';
    if (!isScript && inScript > 0) continue;
    const name = command === 'evalsha' ? SCRIPTS.get(args[1]) ?? args[1].slice(0, 8) : command;
    const s = scripts.get(name) ?? { calls: 0, usec: 0, max: 0 };
    s.calls++;
    s.usec += usec;
    s.max = Math.max(s.max, usec);
    scripts.set(name, s);
    inScript = 0;
  }
  return [...scripts.entries()].sort((a, b) => b[1].usec - a[1].usec).slice(0, 16)
    .map(([name, s]) => `  ${name.padEnd(22)} ${(s.calls / flows).toFixed(2).padStart(6)} calls/flow ${(s.usec / flows).toFixed(1).padStart(7)} µs/flow ${(s.usec / s.calls).toFixed(0).padStart(5)} µs/call (max ${s.max})`)
    .join('\n');
}

/** Redis's CPU seconds so far (user + system). */
async function redisCpu(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  return Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1]);
}

/** Every call logged from here, counters zeroed; returns Redis's CPU seconds so far. */
async function resetStats(redis: Redis): Promise<number> {
  // NOTE: logging every call costs Redis too (each script's own calls are logged): --no-slowlog to compare.
  await redis.config('SET', 'slowlog-log-slower-than', SLOWLOG ? '0' : '-1');
  await redis.config('SET', 'slowlog-max-len', '2000000');
  await redis.slowlog('RESET');
  await redis.config('RESETSTAT');
  return redisCpu(redis);
}

/** What Redis did since `resetStats` (its CPU then: `cpu0`): busy time in calls, per script, per command. */
async function report(redis: Redis, label: string, flows: number, ms: number, nodeSeconds: number, cpu0: number): Promise<void> {
  await redis.config('SET', 'slowlog-log-slower-than', '10000');
  const entries = ((await redis.slowlog('GET', -1)) as SlowEntry[]).filter((e) => !/^(config|slowlog|info)$/i.test(e[3][0]));
  const busy = entries.reduce((sum, e) => sum + e[2], 0) / 1000;
  const inCalls = SLOWLOG ? `, Redis busy in calls ${busy.toFixed(0)} ms (${((1000 * busy) / flows).toFixed(0)} µs/flow)` : '';
  console.log(`${label}: ${flows} flows in ${ms.toFixed(0)} ms (${Math.round(flows / (ms / 1000))} flows/s); Node CPU ${nodeSeconds.toFixed(2)} s, ` +
    `Redis CPU ${((await redisCpu(redis)) - cpu0).toFixed(2)} s${inCalls}`);
  if (SLOWLOG) console.log(byScript(entries, flows));
  console.log(commandCosts(await redis.info('commandstats'), flows, 20).replace(/calls\/task/g, 'calls/flow').replace(/µs\/task/g, 'µs/flow').replace(/^/gm, '    '));
}

/** Every flow submitted first (no worker), then the workers started: the time of each phase. */
async function twoPhases(redis: Redis, system: FlowSystem, n: number, spans: Spans): Promise<void> {
  await system.open();
  let redis0 = await resetStats(redis);
  let cpu0 = nodeCpu();
  await spans.start();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: n }, (_, f) => system.submit(f)));
  const t1 = performance.now();
  const cpu1 = nodeCpu() - cpu0;
  await report(redis, '  phase 1, submit only', n, t1 - t0, cpu1, redis0);
  await spans.stop('submit');
  redis0 = await resetStats(redis);
  let done = 0;
  const last = new Float64Array(n);
  const late: number[] = [];
  cpu0 = nodeCpu();
  await spans.start();
  const t2 = performance.now();
  await system.work({
    childDone: (f) => void (last[f] = Math.max(last[f], now())),
    parentStart: (f) => void late.push(now() - last[f]),
    parentCompleted: () => void done++,
  });
  await until(() => done >= n, 120_000, 1);
  const t3 = performance.now();
  const cpu2 = nodeCpu() - cpu0;
  const p = percentiles(late);
  await report(redis, `  phase 2, workers (start-up included; parent start after last child p50/p99/max ${p.p50}/${p.p99}/${p.max} ms)`, n, t3 - t2, cpu2, redis0);
  await spans.stop('workers');
}

/** V8 CPU profiles of chosen spans of this process (when enabled), saved under out/ and summed up. */
class Spans {
  private readonly session = new Session();
  constructor(private readonly enabled: boolean) {}

  async start(): Promise<void> {
    if (!this.enabled) return;
    this.session.connect();
    await post(this.session, 'Profiler.enable');
    await post(this.session, 'Profiler.start');
  }

  async stop(label: string): Promise<void> {
    if (!this.enabled) return;
    const { profile } = await post<{ profile: Parameters<typeof topSelfTime>[0] }>(this.session, 'Profiler.stop');
    this.session.disconnect();
    const out = path.join(__dirname, 'out');
    fs.mkdirSync(out, { recursive: true });
    const file = path.join(out, `flows-${label}-${Date.now()}.cpuprofile`);
    fs.writeFileSync(file, JSON.stringify(profile));
    console.log(`  profile: ${file}; by self time:`);
    console.log(topSelfTime(profile, 25).replace(/^/gm, '  '));
    console.log('  by total time (functions of the library and the benchmark):');
    console.log(topTotalTime(profile, 25, /\/(libs|bench)\//).replace(/^/gm, '  '));
  }
}

/**
 * `count` flows one at a time (the next submitted when the last parent completed), on an otherwise idle
 * system: the parent's start after its last child with no queueing behind other flows.
 */
async function oneAtATime(system: FlowSystem, count: number): Promise<string> {
  const last = new Float64Array(count);
  const late: number[] = [];
  let completed = 0;
  await system.open();
  await system.work({
    childDone: (f) => void (last[f] = Math.max(last[f], now())),
    parentStart: (f) => void late.push(now() - last[f]),
    parentCompleted: () => void completed++,
  });
  for (let f = 0; f < count; f++) {
    await system.submit(f);
    if (!(await until(() => completed > f, 10_000, 0))) throw new Error(`flow ${f} did not complete in 10 s`);
  }
  const p = percentiles(late.slice(Math.floor(count / 5)));
  return `${system.name}: ${count} flows one at a time, parent start after last child (the first fifth left out) p50/p99/max ${p.p50}/${p.p99}/${p.max} ms`;
}

withServer(async (url, redis) => {
  const n = Number(arg('count', '1000'));
  const rounds = Number(arg('rounds', '2'));
  const alone = Number(arg('one-at-a-time', '0'));
  const concurrency = Number(arg('concurrency', '50'));
  const make = (prefix: string) => (process.argv.includes('--bullmq') ? bull(url, prefix) : ours(url, prefix, concurrency));
  const warm = make(`warm${Date.now()}`);
  await runOnce(redis, warm, 100).finally(() => warm.close());
  for (const maker of alone > 0 ? [ours, bull] : []) {
    await redis.flushall();
    const system = maker(url, `alone${Date.now()}`);
    await oneAtATime(system, alone).then(console.log).finally(() => system.close());
  }
  for (let round = 0; round < rounds; round++) {
    const spans = new Spans(process.argv.includes('--cpu-prof') && round === 0);
    await redis.flushall();
    const system = make(`prof${Date.now()}`);
    try {
      let cpu0 = 0;
      let redis0 = 0;
      const r = await runOnce(redis, system, n, async () => {
        redis0 = await resetStats(redis);
        cpu0 = nodeCpu();
        await spans.start();
      });
      const cpu = nodeCpu() - cpu0;
      console.log(`round ${round + 1}: parent start after last child p50/p99/max ${r.late.p50}/${r.late.p99}/${r.late.max} ms, submit ${r.submitMs.toFixed(0)} ms`);
      await report(redis, '  as the benchmark', n, r.ms, cpu, redis0);
      await spans.stop('bench');
    } finally {
      await system.close();
    }
    await redis.flushall();
    const phased = make(`phase${Date.now()}`);
    try {
      await twoPhases(redis, phased, n, spans);
    } finally {
      await phased.close();
    }
  }
});
