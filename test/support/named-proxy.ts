import * as net from 'net';
import { HOST } from './redis-server';

/**
 * A TCP proxy to a Redis server that can black-hole only some of the connections going through it: those whose
 * client named itself (`CLIENT SETNAME`, sent by ioredis first on every connection) with a name containing a
 * given text. The library opens each of its connections (commands, subscriber, `streams` reader) with its own
 * name, so one of them can be silenced while the others go on.
 *
 * A silenced connection holds its bytes both ways (nothing is lost, as over a real network that stops
 * answering and comes back, where TCP delivers what it retransmitted): `stall(false)` delivers them. A
 * connection opened while silenced is silenced too once its name is seen (its first packet).
 */
export interface NamedProxy {
  readonly host: string;
  readonly port: number;
  /** Names of the connections currently open (undefined: not named yet). */
  names(): (string | undefined)[];
  /** Silences (or releases) the connections whose name contains `text`; every other connection flows. */
  stall(text: string | undefined): void;
  /** How many bytes were held (both ways) since the proxy started. */
  readonly held: number;
  close(): Promise<void>;
}

/** The name a `CLIENT SETNAME <name>` request in `raw` sets (RESP bulk strings), if any. */
function setName(raw: string): string | undefined {
  const match = /\$7\r\nsetname\r\n\$(\d+)\r\n/i.exec(raw);
  if (!match) return undefined;
  const start = match.index + match[0].length;
  return raw.slice(start, start + Number(match[1]));
}

interface Link {
  client: net.Socket;
  upstream: net.Socket;
  name?: string;
  sniffed: string;
  toUpstream: Buffer[];
  toClient: Buffer[];
}

export async function startNamedProxy(target: { port: number }): Promise<NamedProxy> {
  const links = new Set<Link>();
  let silenced: string | undefined;
  let held = 0;
  const isSilent = (link: Link): boolean => silenced !== undefined && link.name !== undefined && link.name.includes(silenced);
  const flush = (link: Link): void => {
    for (const chunk of link.toUpstream.splice(0)) link.upstream.write(chunk);
    for (const chunk of link.toClient.splice(0)) link.client.write(chunk);
  };
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: HOST, port: target.port });
    const link: Link = { client, upstream, sniffed: '', toUpstream: [], toClient: [] };
    links.add(link);
    const end = (): void => {
      if (!links.delete(link)) return;
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.setNoDelay(true);
      socket.on('error', end);
      socket.on('close', end);
    }
    client.on('data', (chunk: Buffer) => {
      if (link.name === undefined && link.sniffed.length < 4096) {
        link.sniffed += chunk.toString('latin1');
        link.name = setName(link.sniffed);
      }
      if (isSilent(link) || link.toUpstream.length) {
        held += chunk.length;
        link.toUpstream.push(chunk);
      } else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (isSilent(link) || link.toClient.length) {
        held += chunk.length;
        link.toClient.push(chunk);
      } else client.write(chunk);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: HOST, port: 0 }, () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    host: HOST,
    port,
    names: () => [...links].map((l) => l.name),
    stall(text) {
      silenced = text;
      for (const link of links) if (!isSilent(link)) flush(link);
    },
    get held() {
      return held;
    },
    close() {
      for (const link of links) {
        link.client.destroy();
        link.upstream.destroy();
      }
      links.clear();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
