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

/**
 * Counts the calls of `command` on keys that contain `keyPart`, on every server at `ports` (MONITOR, which
 * shows the commands scripts call too): unlike INFO commandstats, blind to the other test files that share
 * the servers. `stop()` ends the count and answers it.
 */
export async function monitorCalls(ports: number[], command: string, keyPart: string): Promise<{ stop(): Promise<number> }> {
  const { Redis } = await import('ioredis');
  let calls = 0;
  const monitors = await Promise.all(ports.map(async (port) => {
    const admin = new Redis(port, '127.0.0.1');
    const monitor = await admin.monitor();
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === command && args.slice(1).some((a) => a.includes(keyPart))) calls++;
    });
    return { admin, monitor };
  }));
  return {
    async stop() {
      // NOTE: MONITOR's lines trail the replies a little: a PING on each admin connection after the calls
      // comes back after the server wrote their lines to the monitors.
      await Promise.all(monitors.map(({ admin }) => admin.ping()));
      await new Promise((resolve) => setTimeout(resolve, 50));
      for (const { admin, monitor } of monitors) {
        monitor.disconnect();
        admin.disconnect();
      }
      return calls;
    },
  };
}
