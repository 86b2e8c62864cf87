import * as net from 'net';
import { HOST } from './redis-server';

export interface DelayProxyOptions {
  /** Where connections go (127.0.0.1). Can be changed later with `retarget`. */
  upstreamPort: number;
  /** Each chunk, both ways, is held this long (order kept). */
  delayMs: number;
  /**
   * Delay only connections whose client sent a chunk matching this (from that chunk on); the others pass
   * at once. Default: every connection is delayed.
   */
  delayWhen?: (clientChunk: Buffer) => boolean;
}

export interface DelayProxy {
  readonly port: number;
  /** Open client connections. */
  readonly connections: number;
  /** New connections go to `upstreamPort` (open ones are kept). */
  retarget(upstreamPort: number): void;
  /** Closes every open connection (both sides), dropping what is held. */
  cut(): void;
  /** Delays the delayed connections' chunks from now on by `ms` (a long one holds them: a link black-holed). */
  setDelay(ms: number): void;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

/**
 * A TCP proxy on 127.0.0.1 that holds every chunk `delayMs` before forwarding it, both ways, in order: a
 * slow network, e.g. a replica's replication link that makes it lag its master. When either side closes,
 * the other is closed at once and what was held is dropped (bytes in flight when a server dies are lost).
 */
export async function startDelayProxy(options: DelayProxyOptions): Promise<DelayProxy> {
  let upstreamPort = options.upstreamPort;
  let delayMs = options.delayMs;
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: HOST, port: upstreamPort });
    open.add(client);
    open.add(upstream);
    let delayed = options.delayWhen === undefined;
    let closed = false;
    const timers = new Set<NodeJS.Timeout>();
    const close = (): void => {
      if (closed) return;
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    /** Forwards `from` to `to`, each chunk `delayMs` after it came and never before the one before it. */
    const pipe = (from: net.Socket, to: net.Socket, fromClient: boolean): void => {
      let last = 0;
      from.on('data', (chunk: Buffer) => {
        if (fromClient && !delayed && options.delayWhen?.(chunk)) delayed = true;
        if (!delayed) {
          if (last <= Date.now()) {
            to.write(chunk);
            return;
          }
        }
        const at = Math.max(Date.now() + (delayed ? delayMs : 0), last);
        last = at;
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!closed) to.write(chunk);
        }, at - Date.now());
        timers.add(timer);
      });
      from.on('close', close);
      from.on('error', close);
    };
    pipe(client, upstream, true);
    pipe(upstream, client, false);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: HOST }, () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    get connections() {
      return [...open].length / 2;
    },
    retarget: (to) => void (upstreamPort = to),
    setDelay: (ms) => void (delayMs = ms),
    cut: () => {
      for (const socket of open) socket.destroy();
    },
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
