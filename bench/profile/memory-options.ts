/**
 * `node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/profile/memory-options.ts
 * [--count=N]`: Redis memory per pending delayed task (an hour away) as workload 4 measures it, plain and with
 * the options that add state: priorities (10 levels), groups (100 tenants), both. Each on a fresh server.
 */
import 'reflect-metadata';
import { Redis } from 'ioredis';
import { startRedisServer } from '../../test/support/redis-server';
import { startQueueApp } from '../../test/support/queue-app';
import { payload, sampleServer } from '../stats';
import { arg } from './args-and-costs';

const VARIANTS: Record<string, (i: number) => { priority?: number; group?: string }> = {
  plain: () => ({}),
  priorities: (i) => ({ priority: i % 10 }),
  groups: (i) => ({ group: `tenant-${i % 100}` }),
  'priorities+groups': (i) => ({ priority: i % 10, group: `tenant-${i % 100}` }),
};

async function main(): Promise<void> {
  const n = Number(arg('count', '100000'));
  for (const [name, options] of Object.entries(VARIANTS)) {
    const server = await startRedisServer({ extraArgs: ['--save', ''] });
    try {
      const app = await startQueueApp({ connection: server.url, keyPrefix: 'mem', workers: false, types: { bench: {} } });
      const redis = new Redis(server.url);
      // NOTE: one task first, so the type's own keys and the scripts are not counted per task.
      await app.submit.submit('bench', payload(-1), { delay: 3_600_000, ...options(0) });
      const before = await sampleServer(redis);
      for (let i = 0; i < n; i += 1000) {
        await app.submit.submitMany('bench', Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ payload: payload(i + j), delay: 3_600_000, ...options(i + j) })));
      }
      const after = await sampleServer(redis);
      console.log(JSON.stringify({ variant: name, n, bytesPerTask: Math.round((after.memory - before.memory) / n) }));
      redis.disconnect();
      await app.close();
    } finally {
      await server.remove();
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
