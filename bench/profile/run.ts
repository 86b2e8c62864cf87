/**
 * `npm run bench:profile [-- --count=N --events=none|all|history --cpu-prof]`: submits N immediate tasks from this
 * process, then processes them in a worker process of its own, and prints the worker's Node CPU per task
 * (from its first task start). With `--cpu-prof` the worker records a V8 profile of that span into
 * bench/profile/out/, and the heaviest functions by self time are printed. `WORKER_FLAGS` (environment): Node
 * flags for the worker process, e.g. `WORKER_FLAGS=--trace-gc-nvp` (its collections, printed with its output).
 */
import 'reflect-metadata';
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { Redis } from 'ioredis';
import { startRedisServer } from '../../test/support/redis-server';
import { startQueueApp } from '../../test/support/queue-app';
import { EventStreams } from 'nestjs-distributed-queue/events/event-streams';
import { payload } from '../stats';
import { topSelfTime } from './top';
import { arg, commandCosts } from './args-and-costs';
import { BENCH_SCHEMA, dropBenchSchema, observabilityOptions } from '../observability';

/** Seconds of CPU the server has used (user + system, main thread and the rest). */
function redisCpu(info: string): number {
  return Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1]);
}

async function main(): Promise<void> {
  const n = Number(arg('count', '50000'));
  const events = arg('events', 'none');
  const profile = process.argv.includes('--cpu-prof');
  const server = await startRedisServer({ extraArgs: ['--save', ''] });
  const prefix = `prof${Date.now()}`;
  try {
    // NOTE: with the history on, the producer runs a writer too (so submits are logged), as in the benchmark,
    // unless --producer-writer=no: then the workers' application writes every row (as users often run it).
    const history = events === 'history' && arg('producer-writer', 'yes') !== 'no' ? observabilityOptions('history') : {};
    const producer = await startQueueApp({ connection: server.url, keyPrefix: prefix, workers: false, types: { bench: {} }, ...history });
    // NOTE: without a writer of its own, the producer's submits are logged (with their payloads) only while a
    // writer's recorded flag is up: raised here as the workers' application, running, would keep it.
    if (events === 'history' && !('history' in history)) {
      const streams = producer.app.get(EventStreams);
      await streams.raiseFlags(await streams.ofTypes(['bench']), 'outcomes');
    }
    for (let i = 0; i < n; i += 1000) {
      await producer.submit.submitMany('bench', Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ payload: payload(i + j) })));
    }
    await producer.close();
    const redis = new Redis(server.url);
    await redis.config('RESETSTAT');
    const cpuBefore = redisCpu(await redis.info('cpu'));
    const out = path.join(__dirname, 'out');
    fs.mkdirSync(out, { recursive: true });
    const file = path.join(out, `worker-${events}-${Date.now()}.cpuprofile`);
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [...(process.env.WORKER_FLAGS?.split(' ').filter(Boolean) ?? []), '-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', path.join(__dirname, 'worker.ts'), server.url, prefix, String(n), events, profile ? file : ''], { maxBuffer: 1 << 24, env: { ...process.env, BENCH_SCHEMA } }, (error, text, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(text),
      ),
    );
    console.log(stdout.trim());
    const redisMicros = (redisCpu(await redis.info('cpu')) - cpuBefore) * 1e6;
    console.log(`redis CPU ${(redisMicros / n).toFixed(1)} µs/task in all, of which in commands:`);
    console.log(commandCosts(await redis.info('commandstats'), n));
    redis.disconnect();
    if (profile) {
      console.log(`profile: ${file}`);
      console.log(topSelfTime(JSON.parse(fs.readFileSync(file, 'utf8')), 40));
    }
  } finally {
    await server.remove();
    if (events === 'history') await dropBenchSchema();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
