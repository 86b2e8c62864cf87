import { Queue, Worker } from 'bullmq';
import type { Row } from './report';
import { percentiles, until } from './stats';
import { costSince, markCost } from './cost';
import { spawnChild, type ChildHandle } from '../test/support/child';
import { startQueueApp } from '../test/support/queue-app';
import { versus, type Context } from './workloads';
import { groupmqOrdered } from './ordered-groupmq';
import { OrderLog, submitRounds } from './order-log';


function shape(quick: boolean) {
  return quick ? { keys: 100, perKey: 20 } : { keys: 500, perKey: 40 };
}

async function startMachines(ctx: Context, url: string, prefix: string, names: string[], log: OrderLog): Promise<Map<string, ChildHandle>> {
  const children = new Map<string, ChildHandle>();
  for (const machine of names) {
    const child = spawnChild('bench/route-worker.ts', { BENCH_URL: url, BENCH_PREFIX: prefix, BENCH_QID: 'bench', BENCH_MACHINE: machine });
    children.set(machine, child);
  }
  await Promise.all([...children.values()].map((c) => c.waitForMessage((m) => m.type === 'ready', 60_000)));
  void ctx;
  // Collect the starts each machine reports.
  const consumed = new Map<string, number>();
  const poll = setInterval(() => {
    for (const [machine, child] of children) {
      const from = consumed.get(machine) ?? 0;
      for (let i = from; i < child.messages.length; i++) {
        const m = child.messages[i];
        if (typeof m.cpu === 'number') log.cpu.set(machine, m.cpu);
        if (m.type !== 'starts') continue;
        for (const line of m.items as string[]) {
          const [key, n, partition, at] = line.split('|');
          log.record(key, Number(n), Number(at));
          log.lastStart.set(Number(partition), { at: Number(at), machine });
        }
      }
      consumed.set(machine, child.messages.length);
    }
  }, 10);
  (children as unknown as { poll: NodeJS.Timeout }).poll = poll;
  return children;
}


/** 3. Ordered: keys × tasks in order per key; this library with 2 processes vs BullMQ at concurrency 1 and 50. */
export async function ordered(ctx: Context, url: string): Promise<Row[]> {
  const { keys, perKey } = shape(ctx.quick);
  const total = keys * perKey;
  const rows: Row[] = [];
  await ctx.redis.flushall();
  {
    const log = new OrderLog();
    const children = await startMachines(ctx, url, 'bench', ['w1', 'w2'], log);
    const producer = await startQueueApp({ connection: url, keyPrefix: 'bench', workers: false, types: { ordered: { ordered: true } }, route: { qId: 'bench', partitions: 8 } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const workerCpu0 = [...log.cpu.values()].reduce((a, b) => a + b, 0);
    const mark = await markCost(ctx.redis);
    const t0 = performance.now();
    await submitRounds((n, names) => producer.submit.submitOrderedMany('ordered', names.map((key) => ({ key, payload: { n } }))), keys, perKey);
    process.stderr.write(`  ordered: submitted in ${Math.round(performance.now() - t0)} ms, ${log.distinct()} started by then\n`);
    await until(() => log.distinct() >= total, 120_000, 10);
    const seconds = (performance.now() - t0) / 1000;
    const cost = await costSince(ctx.redis, mark, total);
    // NOTE: the last reports may be up to 20 ms old: the workers' CPU is a slight undercount.
    const workerCpu = [...log.cpu.values()].reduce((a, b) => a + b, 0) - workerCpu0;
    clearInterval((children as unknown as { poll: NodeJS.Timeout }).poll);
    for (const child of children.values()) child.kill('SIGKILL');
    await producer.close();
    rows.push({
      workload: `3. ordered ${keys} keys × ${perKey}`,
      system: 'this library (route queue, 2 processes)',
      figures: {
        'tasks/s': Math.round(total / seconds),
        'order violations': log.violations,
        missing: total - log.distinct(),
        duplicates: log.starts - log.distinct(),
        'cmds/task': (cost.calls / total).toFixed(2),
        'CPU s workers/producer/redis': `${workerCpu.toFixed(2)}/${cost.nodeCpuS.toFixed(2)}/${cost.redisCpuS.toFixed(2)}`,
      },
      key: { name: 'tasks/s', value: total / seconds },
      // NOTE: the workers' sends are in their processes, not counted here.
      cost: { ...cost, nodeCpuS: cost.nodeCpuS + workerCpu, sends: NaN },
    });
  }
  for (const concurrency of [1, 50]) {
    await ctx.redis.flushall();
    const { hostname, port } = new URL(url);
    const connection = { host: hostname, port: Number(port) };
    const queue = new Queue('ordered', { connection });
    const log = new OrderLog();
    const worker = new Worker('ordered', async (job) => {
      log.record(job.data.key, job.data.n, performance.now());
      if (job.data.n % 2 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }, { connection, concurrency });
    await worker.waitUntilReady();
    const t0 = performance.now();
    await submitRounds((n, names) => queue.addBulk(names.map((key) => ({ name: 'ordered', data: { key, n }, opts: { removeOnComplete: { count: 1000 } } }))), keys, perKey);
    await until(() => log.distinct() >= total, 600_000, 10);
    const seconds = (performance.now() - t0) / 1000;
    await worker.close();
    await queue.close();
    rows.push({
      workload: `3. ordered ${keys} keys × ${perKey}`,
      system: `bullmq concurrency ${concurrency}`,
      figures: { 'tasks/s': Math.round(total / seconds), 'order violations': log.violations, missing: total - log.distinct() },
      key: concurrency === 1 ? { name: 'tasks/s', value: total / seconds } : undefined,
    });
  }
  await ctx.redis.flushall();
  rows.push(await groupmqOrdered(url, `ord${Date.now()}`, keys, perKey));
  return versus(rows, 'groupmq');
}

/** 5. Failover: 3 route-queue processes under load, one SIGKILLed: time until its partitions process again. */
export async function failover(ctx: Context, url: string): Promise<Row[]> {
  const { keys, perKey } = shape(ctx.quick);
  const total = keys * perKey;
  await ctx.redis.flushall();
  const log = new OrderLog();
  const children = await startMachines(ctx, url, 'bench', ['w1', 'w2', 'w3'], log);
  const producer = await startQueueApp({ connection: url, keyPrefix: 'bench', workers: false, types: { ordered: { ordered: true } }, route: { qId: 'bench', partitions: 8 } });
  await until(() => false, 1500);
  const load = submitRounds((n, names) => producer.submit.submitOrderedMany('ordered', names.map((key) => ({ key, payload: { n } }))), keys, perKey, 50);
  await until(() => log.distinct() >= total / 4, 60_000, 5);
  const status = await producer.inspect.getRouteStatus();
  const victim = status.partitions.filter((p) => p.owner === 'w2').map((p) => p.partition);
  children.get('w2')!.kill('SIGKILL');
  const killedAt = Date.now();
  const back = await until(() => victim.every((p) => (log.lastStart.get(p)?.at ?? 0) > killedAt), 30_000, 5);
  const recovery = Date.now() - killedAt;
  await load;
  await until(() => log.distinct() >= total, 60_000, 10);
  clearInterval((children as unknown as { poll: NodeJS.Timeout }).poll);
  for (const child of children.values()) child.kill('SIGKILL');
  await producer.close();
  void percentiles;
  return [
    {
      workload: '5. failover (heartbeat 0.5 s, offline 2 s, period 0.5 s)',
      system: 'this library (route queue, 3 processes)',
      figures: {
        'partitions processing again after ms': back ? recovery : `not within 30 s`,
        lost: total - log.distinct(),
        'order violations': log.violations,
      },
    },
    { workload: '5. failover (heartbeat 0.5 s, offline 2 s, period 0.5 s)', system: 'bullmq', figures: { 'n/a': 'no partitions or per-key order outside BullMQ Pro' } },
  ];
}
