import { Redis } from 'ioredis';

/** Counters of one Redis server, read before and after a measurement. */
export interface ServerSample {
  calls: number;
  cpu: number;
  memory: number;
}

/** Total command calls (commands run inside Lua included), CPU seconds and used memory. */
export async function sampleServer(redis: Redis): Promise<ServerSample> {
  const [stats, cpu, memory] = await Promise.all([redis.info('commandstats'), redis.info('cpu'), redis.info('memory')]);
  let calls = 0;
  for (const m of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    // NOTE: the INFO calls of the benchmark itself are not the system's work.
    if (m[1] !== 'info') calls += Number(m[2]);
  }
  const num = (text: string, name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? 0);
  return { calls, cpu: num(cpu, 'used_cpu_user') + num(cpu, 'used_cpu_sys'), memory: num(memory, 'used_memory') };
}

/** p50 / p99 / max (ms, rounded) of a list. */
export function percentiles(values: number[]): { p50: number; p99: number; max: number } {
  if (values.length === 0) return { p50: NaN, p99: NaN, max: NaN };
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const round = (v: number) => Math.round(v * 10) / 10;
  return { p50: round(at(0.5)), p99: round(at(0.99)), max: round(sorted[sorted.length - 1]) };
}

/** Waits until `done()` or `timeoutMs`; returns whether it finished. */
export async function until(done: () => boolean, timeoutMs: number, stepMs = 5): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
  return true;
}

/** CPU seconds of this Node process. */
export function nodeCpu(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/** A payload of about 100 bytes. */
export function payload(i: number): { i: number; text: string } {
  return { i, text: 'x'.repeat(80) };
}
