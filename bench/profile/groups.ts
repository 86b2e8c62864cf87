/**
 * `node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/profile/groups.ts [--count=N]
 * [--tenants=M] [--rounds=R]`: workload 14 on this library alone, with and without groups, alternating, every
 * Redis call of the run (from the worker's start) in SLOWLOG: per script (told apart by its SHA and shown by
 * its first keys) the calls, their Redis time per task and per call, and INFO commandstats per task (the
 * scripts' inner commands).
 */
import 'reflect-metadata';
import { ours, runOnce } from '../groups';
import { arg, commandCosts, withServer } from './args-and-costs';

type SlowEntry = [number, number, number, string[]];

/** Per script SHA (or command): calls, Redis µs in all, the largest call. */
function byScript(entries: SlowEntry[], tasks: number): string {
  const scripts = new Map<string, { calls: number; usec: number; max: number; sample: string }>();
  for (const [, , usec, args] of entries) {
    const command = args[0].toLowerCase();
    // NOTE: the commands scripts run are logged too (after their script): only the calls themselves here.
    if (command !== 'evalsha' && command !== 'eval') continue;
    const name = command === 'evalsha' ? args[1].slice(0, 8) : 'eval';
    const s = scripts.get(name) ?? { calls: 0, usec: 0, max: 0, sample: args.slice(3, 5).join(' ').slice(0, 70) };
    s.calls++;
    s.usec += usec;
    s.max = Math.max(s.max, usec);
    scripts.set(name, s);
  }
  return [...scripts.entries()].sort((a, b) => b[1].usec - a[1].usec).slice(0, 8)
    .map(([name, s]) => `  ${name.padEnd(9)} ${String(s.calls).padStart(6)} calls ${(s.usec / 1000).toFixed(0).padStart(5)} ms ${(s.usec / tasks).toFixed(2).padStart(6)} µs/task ${(s.usec / s.calls).toFixed(0).padStart(5)} µs/call (max ${s.max})  ${s.sample}`)
    .join('\n');
}

withServer(async (url, redis) => {
  const n = Number(arg('count', '20000'));
  const tenants = Number(arg('tenants', '50'));
  const rounds = Number(arg('rounds', '2'));
  for (let round = 0; round < rounds; round++) {
    for (const grouped of [true, false]) {
      await redis.flushall();
      const prefix = `prof${Date.now()}`;
      const system = ours(url, prefix, grouped);
      // The groups' state every 10 ms: tasks in groups' queues (promoted, not taken), the big tenant's
      // waiting tasks (promoted or not), groups with waiting tasks, groups in the rotation.
      const ws = `${prefix}:{${prefix}:grp}:wait`;
      const timeline: string[] = [];
      let sampler: NodeJS.Timeout | undefined;
      const sample = async (t0: number) => {
        const [[, gn], [, big], [, groups], [, rotation]] = (await redis.pipeline().get(`${ws}:gn`).zscore(`${ws}:gb`, 'big').zcard(`${ws}:gb`).zcard(`${ws}:gr`).exec())!;
        timeline.push(`${(performance.now() - t0).toFixed(0)} ms: in groups' queues ${gn ?? 0}, big waiting ${big ?? 0}, groups waiting ${groups}, in rotation ${rotation}`);
      };
      try {
        const r = await runOnce(redis, system, n, tenants, 120_000, async () => {
          const t0 = performance.now();
          if (grouped && round === 0) sampler = setInterval(() => void sample(t0), 10);
          await redis.config('SET', 'slowlog-log-slower-than', '0');
          await redis.config('SET', 'slowlog-max-len', '1000000');
          await redis.slowlog('RESET');
          await redis.config('RESETSTAT');
        });
        clearInterval(sampler);
        await redis.config('SET', 'slowlog-log-slower-than', '10000');
        const entries = (await redis.slowlog('GET', -1)) as SlowEntry[];
        const stats = await redis.info('commandstats');
        const busy = entries.filter((e) => /^eval/i.test(e[3][0])).reduce((sum, e) => sum + e[2], 0) / 1000;
        console.log(`round ${round + 1}, ${system.name}: ${r.total} tasks in ${r.ms.toFixed(0)} ms from the worker's start, ` +
          `${Math.round(r.total / (r.ms / 1000))} tasks/s; small wait p50/p99/max ${r.waits.p50}/${r.waits.p99}/${r.waits.max} ms; ` +
          `Redis busy ${busy.toFixed(0)} ms in calls (${(1000 * busy / r.total).toFixed(1)} µs/task); Node CPU ${r.nodeCpu.toFixed(2)} s`);
        console.log(byScript(entries, r.total));
        if (timeline.length > 0) console.log(timeline.filter((_, i) => i % 3 === 0).map((line) => `  ${line}`).join('\n'));
        console.log(commandCosts(stats, r.total, 16).replace(/^/gm, '  '));
      } finally {
        await system.close();
      }
    }
  }
});
