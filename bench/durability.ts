import { Redis } from 'ioredis';
import type { Task } from 'nestjs-distributed-queue';
import { startQueueApp, workerClass } from '../test/support/queue-app';
import { startRedisServer, type RedisServerHandle } from '../test/support/redis-server';
import type { Row } from './report';
import { percentiles, until } from './stats';

const LOOPS = 32;
const DURABLE = { replicas: 1, timeoutMs: 1000 };

/** Submits from `LOOPS` loops, one task a call, for `ms`: calls per second and their latencies. */
async function submitLoops(url: string, durable: boolean, ms: number): Promise<{ rate: number; p: { p50: number; p99: number; max: number } }> {
  const app = await startQueueApp({ connection: url, keyPrefix: `dur${Date.now()}`, workers: false, types: { bench: {} }, durability: durable ? DURABLE : undefined });
  try {
    const times: number[] = [];
    const end = performance.now() + ms;
    await Promise.all(Array.from({ length: LOOPS }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await app.submit.submit('bench', { i: times.length }, { delay: 60_000 });
        times.push(performance.now() - t0);
      }
    }));
    return { rate: Math.round(times.length / (ms / 1000)), p: percentiles(times) };
  } finally {
    await app.close();
  }
}

/** Runs `n` ready tasks with one worker at concurrency 50 (its acks durable when `durable`): tasks per second. */
async function runAll(url: string, durable: boolean, n: number): Promise<number> {
  const prefix = `durw${Date.now()}`;
  const producer = await startQueueApp({ connection: url, keyPrefix: prefix, workers: false, types: { bench: {} } });
  let ran = 0;
  try {
    for (let i = 0; i < n; i += 1000) {
      await producer.submit.submitMany('bench', Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ payload: { i: i + j } })));
    }
    const t0 = performance.now();
    const worker = await startQueueApp({ connection: url, keyPrefix: prefix, durability: durable ? DURABLE : undefined }, [
      workerClass('bench', { concurrency: 50 }, (_t: Task) => void ran++),
    ]);
    try {
      await until(() => ran >= n, 120_000);
      return Math.round(ran / ((performance.now() - t0) / 1000));
    } finally {
      await worker.close();
    }
  } finally {
    await producer.close();
  }
}

/**
 * 10. The cost of `durability: { replicas: 1 }`: a master and one replica of its own on this machine (no
 * lag: what `WAIT` itself costs), the same loads with and without the option: submits from 32 loops, and a
 * worker running a backlog (its acks durable too).
 */
export async function durabilityCost(quick: boolean): Promise<Row[]> {
  const ms = quick ? 3000 : 8000;
  const n = quick ? 10_000 : 30_000;
  const master = await startRedisServer({ extraArgs: ['--save', ''] });
  let replica: RedisServerHandle | undefined;
  try {
    replica = await startRedisServer({ extraArgs: ['--save', '', '--replicaof', '127.0.0.1', String(master.port)] });
    const probe = new Redis(replica.url);
    try {
      for (let i = 0; i < 100 && !/master_link_status:up/.test(await probe.info('replication')); i++) await new Promise((r) => setTimeout(r, 100));
    } finally {
      probe.disconnect();
    }
    const rows: Row[] = [];
    for (const durable of [false, true]) {
      const submits = await submitLoops(master.url, durable, ms);
      const run = await runAll(master.url, durable, n);
      rows.push({
        workload: `10. durability, a master and 1 replica, ${LOOPS} submit loops; a backlog of ${n} run at concurrency 50`,
        system: `this library, durability ${durable ? '{ replicas: 1 }' : 'off'}`,
        figures: { 'submits/s': submits.rate, 'submit p50/p99/max ms': `${submits.p.p50}/${submits.p.p99}/${submits.p.max}`, 'run tasks/s': run },
      });
    }
    const [off, on] = rows;
    on.figures['submits/s vs off'] = `${Math.round((100 * Number(on.figures['submits/s'])) / Number(off.figures['submits/s']))} %`;
    on.figures['run tasks/s vs off'] = `${Math.round((100 * Number(on.figures['run tasks/s'])) / Number(off.figures['run tasks/s']))} %`;
    return rows;
  } finally {
    await replica?.remove();
    await master.remove();
  }
}
