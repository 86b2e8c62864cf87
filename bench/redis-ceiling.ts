import { execFile } from 'child_process';
import { promisify } from 'util';
import type { Redis } from 'ioredis';
import type { Row } from './report';

const run = promisify(execFile);

/**
 * 8. Redis's own ceiling on this machine: `redis-benchmark` calling EVALSHA of a trivial script, 16 per
 * pipeline, against the benchmark's server. Beside it, the Redis CPU time per task this library spent in the
 * immediate workload (when it ran): the share of the ceiling a task costs.
 */
export async function redisCeiling(redis: Redis, port: number, quick: boolean, rows: Row[]): Promise<Row[]> {
  const sha = (await redis.script('LOAD', 'return 1')) as string;
  const requests = quick ? 200_000 : 1_000_000;
  const { stdout } = await run('redis-benchmark', ['-h', '127.0.0.1', '-p', String(port), '-n', String(requests), '-P', '16', '-c', '50', '-q', 'EVALSHA', sha, '0'], {
    timeout: 120_000,
  });
  const perSecond = Number(/([\d.]+) requests per second/.exec(stdout)?.[1] ?? NaN);
  const callUs = 1e6 / perSecond;
  const figures: Row['figures'] = { 'EVALSHA/s (pipelined 16)': Math.round(perSecond), 'µs per call': callUs.toFixed(2) };
  const immediate = rows.find((r) => r.workload.startsWith('1. immediate') && r.system === 'this library (events+metrics off)');
  if (immediate) {
    const n = Number(/immediate (\d+)/.exec(immediate.workload)?.[1]);
    const taskUs = (Number(immediate.figures['redis CPU s']) * 1e6) / n;
    figures['this library: Redis µs per task (immediate, off)'] = taskUs.toFixed(1);
    figures['tasks/s at that cost'] = Math.round(1e6 / taskUs);
    figures['= calls of the ceiling per task'] = (taskUs / callUs).toFixed(1);
  }
  return [{ workload: '8. Redis ceiling (redis-benchmark)', system: 'redis-server', figures }];
}
