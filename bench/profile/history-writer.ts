/**
 * `node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/profile/history-writer.ts
 * [--count=N] [--rounds=R]`: the history writer alone. Fills a type's event stream with N tasks' lives as an
 * application writes them (submits with payloads, from a producer, while a writer's flag is up; then their
 * completions, from a worker), then starts an application that only writes the history (no workers) in a
 * process of its own and times it until every row is in PostgreSQL: its Node CPU per task, and PostgreSQL's
 * (its backends'). The same application over an empty stream, started just before (after a first one that
 * loads the code), gives the start-up's cost, taken off. Each round uses a fresh copy of the stream and a
 * fresh schema. With HW_PROF=<dir>, each writer process leaves a V8 CPU profile there.
 */
import 'reflect-metadata';
import { execFile } from 'child_process';
import { Redis } from 'ioredis';
import { TaskHistoryService } from 'nestjs-distributed-queue';
import { EventStreams } from 'nestjs-distributed-queue/events/event-streams';
import { startRedisServer } from '../../test/support/redis-server';
import { startQueueApp, workerClass } from '../../test/support/queue-app';
import { payload } from '../stats';
import { arg } from './args-and-costs';
import { BENCH_SCHEMA, historyBackendsCpu, observabilityOptions } from '../observability';
import { delayQueueKeys } from 'nestjs-distributed-queue/redis/queue-keys';

/** One writer-only application over `prefix`'s stream until its rows are in PostgreSQL: its CPU (µs). */
async function writeOnce(url: string, prefix: string): Promise<{ user: number; system: number; pg: number }> {
  const cpu0 = process.cpuUsage();
  const app = await startQueueApp({ connection: url, keyPrefix: prefix, workers: false, types: { bench: {} }, ...observabilityOptions('history') });
  await app.app.get(TaskHistoryService).flush({ timeoutMs: 600_000 });
  const cpu = process.cpuUsage(cpu0);
  // NOTE: the application's own backends (its pool's connections, new with it) since they started.
  const pg = await historyBackendsCpu();
  await app.close();
  return { ...cpu, pg };
}

/**
 * The child: writes the history of `prefix`'s stream; prints its CPU (µs), less that of the same over an
 * empty stream (the application's start, after a first one has loaded and compiled the code), and
 * PostgreSQL's.
 */
async function child(url: string, prefix: string): Promise<void> {
  await writeOnce(url, `${prefix}-warm`);
  const base = await writeOnce(url, `${prefix}-empty`);
  const cpu = await writeOnce(url, prefix);
  process.stdout.write(JSON.stringify({ nodeMicros: cpu.user + cpu.system - base.user - base.system, systemMicros: cpu.system - base.system, pgMicros: (cpu.pg - base.pg) * 1e6 }) + '\n');
  process.exit(0);
}

/** Runs the child over `prefix` with a schema of its own; its figures. */
function write(url: string, prefix: string, schema: string): Promise<{ nodeMicros: number; systemMicros: number; pgMicros: number }> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [...(process.env.HW_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.HW_PROF}`] : []), '-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', __filename, '--child', url, prefix], { env: { ...process.env, BENCH_SCHEMA: schema } }, (error, out, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(out.trim().split('\n').pop()!)),
    ),
  );
}

/** Fills `prefix`'s stream with `n` tasks' submits and completions. */
async function fill(url: string, prefix: string, n: number): Promise<void> {
  const producer = await startQueueApp({ connection: url, keyPrefix: prefix, workers: false, types: { bench: {} } });
  const streams = producer.app.get(EventStreams);
  // NOTE: submits and completions are logged (with payloads) only while a writer's recorded flag is up.
  await streams.raiseFlags(await streams.ofTypes(['bench']), 'outcomes');
  for (let i = 0; i < n; i += 1000) {
    await producer.submit.submitMany('bench', Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ payload: payload(i + j) })));
  }
  let done = 0;
  let finished!: () => void;
  const all = new Promise<void>((resolve) => (finished = resolve));
  const worker = await startQueueApp({ connection: url, keyPrefix: prefix }, [workerClass('bench', { concurrency: 50 }, () => void (++done === n && finished()))]);
  await all;
  await Promise.all([worker.close(), producer.close()]);
}

async function main(): Promise<void> {
  if (process.argv[2] === '--child') return child(process.argv[3], process.argv[4]);
  const n = Number(arg('count', '50000'));
  const rounds = Number(arg('rounds', '3'));
  const server = await startRedisServer({ extraArgs: ['--save', ''] });
  try {
    for (let round = 1; round <= rounds; round++) {
      const prefix = `hw${round}x${Date.now()}`;
      await fill(server.url, prefix, n);
      const redis = new Redis(server.url);
      const entries = await redis.xlen(delayQueueKeys(prefix, 'bench').log);
      redis.disconnect();
      const r = await write(server.url, prefix, `${BENCH_SCHEMA}_${round}`);
      const per = (micros: number) => Number((micros / n).toFixed(2));
      console.log(JSON.stringify({ round, n, entries, writerMicrosPerTask: per(r.nodeMicros), systemMicrosPerTask: per(r.systemMicros), postgresMicrosPerTask: per(r.pgMicros) }));
    }
  } finally {
    await server.remove();
    for (const suffix of Array.from({ length: rounds }, (_, i) => String(i + 1))) await dropSchema(`${BENCH_SCHEMA}_${suffix}`);
  }
}

/** Drops one of this run's schemas. */
async function dropSchema(schema: string): Promise<void> {
  const { Client } = await import('pg');
  const client = new Client({ connectionString: process.env.BENCH_PG ?? 'postgres://postgres@127.0.0.1:5432/test' });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
