/**
 * `npm run bench [-- --quick]`: every workload on this library and on BullMQ in one run, against a
 * redis-server started here on a free port; prints one table and writes docs/benchmarks.md.
 */
import 'reflect-metadata';
import { Redis } from 'ioredis';
import { startRedisServer } from '../test/support/redis-server';
import { costSection, renderTable, writeReport, type Row } from './report';
import { bullmq, ours } from './systems';
import { beeQueue } from './bee-queue';
import { delayed, immediate, memory, scale, type Context } from './workloads';
import { failover, ordered } from './ordered';
import { serviceMode } from './service-mode';
import { roundTrip } from './round-trip';
import { redisCeiling } from './redis-ceiling';
import { clusterScale } from './cluster-scale';
import { durabilityCost } from './durability';
import { limits } from './limits';
import { prioritized } from './priorities';
import { groups } from './groups';
import { flows } from './flows';
import { results } from './results';
import { testingModule } from './testing';
import { dedupe } from './dedupe';
import { each } from './workloads';

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7).split(',');
  const started = Date.now();
  const server = await startRedisServer({ extraArgs: ['--save', ''] });
  const redis = new Redis(server.url);
  const ctx: Context = {
    redis,
    quick,
    make: {
      ours: (observability) => ours(server.url, `bench${Date.now()}`, observability),
      bullmq: () => bullmq(server.url, `bench${Date.now()}`),
      bee: () => beeQueue(server.url, `bench${Date.now()}`),
      service: () => serviceMode(server.url, `bench${Date.now()}`),
    },
  };
  const rows: Row[] = [];
  const workloads: [string, () => Promise<Row[]>][] = [
    ['immediate', () => immediate(ctx)],
    ['delayed', () => delayed(ctx)],
    ['ordered', () => ordered(ctx, server.url)],
    ['memory', () => memory(ctx)],
    ['failover', () => failover(ctx, server.url)],
    ['scale', () => scale(ctx)],
    ['roundtrip', () => roundTrip(ctx, (fn) => each(ctx, fn))],
    ['ceiling', () => redisCeiling(redis, server.port, quick, rows)],
    ['cluster', () => clusterScale(quick)],
    ['durability', () => durabilityCost(quick)],
    ['limits', () => limits(server.url, quick)],
    ['prioritized', () => prioritized(server.url, quick)],
    ['groups', () => groups(server.url, quick)],
    ['flows', () => flows(server.url, quick)],
    ['results', () => results(server.url, quick)],
    ['testing', () => testingModule(quick)],
    ['dedupe', () => dedupe(server.url, quick, () => redis.flushall())],
  ];
  try {
    for (const [name, run] of workloads) {
      if (only && !only.includes(name)) continue;
      process.stderr.write(`running ${name}...\n`);
      rows.push(...(await run()));
    }
    const version = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? '?';
    writeReport(rows, { redis: version, quick: quick || !!only, seconds: Math.round((Date.now() - started) / 1000) });
    console.log([renderTable(rows), '', ...costSection(rows)].join('\n'));
  } finally {
    redis.disconnect();
    await server.remove();
  }
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
