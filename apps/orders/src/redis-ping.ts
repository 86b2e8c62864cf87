import * as net from 'net';

/**
 * Sends one PING over a raw socket and returns the first reply line (`+PONG`, or e.g. `-NOAUTH ...`),
 * or null when nothing answered within `timeoutMs`. Never throws.
 */
export function pingRedis(host: string, port: number, timeoutMs = 500): Promise<string | null> {
  return new Promise((resolve) => {
    let reply = '';
    let settled = false;
    const socket = net.createConnection({ host, port });
    const done = (value: string | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    socket.once('connect', () => socket.write('*1\r\n$4\r\nPING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('latin1');
      const end = reply.indexOf('\r\n');
      if (end >= 0) done(reply.slice(0, end));
    });
    socket.once('error', () => done(null));
    socket.once('close', () => done(reply || null));
  });
}
