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
 * Counts the calls of `command` whose arguments contain `keyPart` (every one of them, given several), on every server at `ports` (MONITOR, which
 * shows the commands scripts call too): unlike INFO commandstats, blind to the other test files that share
 * the servers. `stop()` ends the count and answers it.
 *
 * NOTE: MONITOR is read from a plain socket, line by line: ioredis's `monitor()` takes the lines that arrive
 * in the same read as MONITOR's +OK for replies ("Command queue state error") while busy servers flood it.
 */
export async function monitorCalls(ports: number[], command: string, keyPart: string | string[]): Promise<{ stop(): Promise<number> }> {
  const parts = Array.isArray(keyPart) ? keyPart : [keyPart];
  const { Redis } = await import('ioredis');
  const net = await import('net');
  let calls = 0;
  const wanted = `"${command.toLowerCase()}"`;
  const count = (line: string) => {
    // +<time> [<db> <client>] "<command>" "<arg>" ...
    const at = line.indexOf('] "');
    if (at < 0) return;
    const name = line.slice(at + 2, line.indexOf('"', at + 3) + 1).toLowerCase();
    if (name === wanted && parts.every((part) => line.includes(part, at))) calls++;
  };
  const monitors = await Promise.all(ports.map(async (port) => {
    const admin = new Redis(port, '127.0.0.1');
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.on('error', () => undefined);
    let rest = '';
    let started!: () => void;
    const ok = new Promise<void>((resolve) => (started = resolve));
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\r\n');
      rest = lines.pop()!;
      for (const line of lines) {
        if (line === '+OK') started();
        else count(line);
      }
    });
    socket.write('MONITOR\r\n');
    await ok;
    return { admin, socket };
  }));
  return {
    async stop() {
      // NOTE: MONITOR's lines trail the replies a little: a PING on each admin connection after the calls
      // comes back after the server wrote their lines to the monitors.
      await Promise.all(monitors.map(({ admin }) => admin.ping()));
      await new Promise((resolve) => setTimeout(resolve, 50));
      for (const { admin, socket } of monitors) {
        socket.destroy();
        admin.disconnect();
      }
      return calls;
    },
  };
}
