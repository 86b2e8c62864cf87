/**
 * A route queue machine for the benchmarks: an ordered worker whose handler does ~1 ms of async work for
 * half of the tasks and reports starts over IPC in batches: "key|n|partition|at".
 * env: BENCH_URL, BENCH_PREFIX, BENCH_QID, BENCH_MACHINE
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedQueueModule, type Task } from 'nestjs-distributed-queue';
import { workerClass } from '../test/support/queue-app';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
let pending: string[] = [];
const cpuSeconds = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};
setInterval(() => {
  if (pending.length === 0) return;
  // NOTE: each report carries this process's CPU seconds so far, so the benchmark can tell what it cost.
  process.send?.({ type: 'starts', items: pending, cpu: cpuSeconds() });
  pending = [];
}, 20);

// NOTE: concurrency 50 per process, as issue 14 asks (128 was what 4 partitions × keyConcurrency 32 gave before).
const Worker = workerClass('ordered', { ordered: true, concurrency: 50 }, async (task: Task<{ n: number }>) => {
  pending.push(`${task.key}|${task.payload.n}|${task.fence!.partition}|${Date.now()}`);
  if (task.payload.n % 2 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
});

@Module({
  imports: [
    DistributedQueueModule.forRoot({
      connection: env('BENCH_URL'),
      keyPrefix: env('BENCH_PREFIX'),
      route: {
        qId: env('BENCH_QID'), machineId: env('BENCH_MACHINE'), partitions: 8,
        heartbeatMs: 500, offlineMs: 2000, idleMs: 2000, rebalanceMs: 500,
      },
    }),
  ],
  providers: [Worker],
})
class BenchRouteModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(BenchRouteModule, { logger: ['error'] });
  app.enableShutdownHooks();
  await app.init();
  process.send?.({ type: 'ready', cpu: cpuSeconds() });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
