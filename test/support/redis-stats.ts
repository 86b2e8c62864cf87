import type { Redis } from 'ioredis';

/** How many times the server ran the commands `names` (INFO commandstats; 0 for one never run). */
export async function commandCalls(admin: Redis, ...names: string[]): Promise<number> {
  const stats = await admin.info('commandstats');
  return names.reduce((sum, name) => sum + Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0), 0);
}

/** How many times the server answered with the error `prefix` (INFO errorstats, e.g. 'NOSCRIPT'). */
export async function errorReplies(admin: Redis, prefix: string): Promise<number> {
  const stats = await admin.info('errorstats');
  return Number(new RegExp(`errorstat_${prefix}:count=(\\d+)`).exec(stats)?.[1] ?? 0);
}
