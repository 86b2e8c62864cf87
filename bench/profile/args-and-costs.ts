import { Redis } from 'ioredis';
import { startRedisServer } from '../../test/support/redis-server';

/** `--name=value` from the command line, else `fallback`. */
export function arg(name: string, fallback: string): string {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
}

/**
 * Redis CPU per task by command (scripts' inner commands included), from INFO commandstats, the most costly
 * first (at most `limit`); the profiler's own INFO, CONFIG and SLOWLOG calls left out.
 */
export function commandCosts(info: string, n: number, limit = Infinity): string {
  const rows = [...info.matchAll(/cmdstat_([\w|]+):calls=(\d+),usec=(\d+)/g)]
    .map(([, name, calls, usec]) => ({ name, calls: Number(calls), usec: Number(usec) }))
    .filter((r) => !/^(info|config|slowlog)\b/.test(r.name));
  rows.sort((a, b) => b.usec - a.usec);
  return rows.slice(0, limit).map((r) => `${r.name.padEnd(16)} ${(r.calls / n).toFixed(3).padStart(7)} calls/task ${(r.usec / n).toFixed(2).padStart(6)} µs/task`).join('\n');
}

/**
 * Runs a profiling script's `body` against a redis-server started for it on a free port (no RDB snapshots),
 * with a client on it; stops both after, then exits (1 with the error printed on a failure).
 */
export function withServer(body: (url: string, redis: Redis) => Promise<void>): void {
  const run = async () => {
    const server = await startRedisServer({ extraArgs: ['--save', ''] });
    const redis = new Redis(server.url);
    try {
      await body(server.url, redis);
    } finally {
      redis.disconnect();
      await server.remove();
    }
  };
  run().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
