import * as net from 'net';
import { HOST } from './redis-server';

/** A request as the proxy parsed it: its raw RESP bytes and its arguments (latin1 strings). */
export interface ProxiedCommand {
  raw: Buffer;
  args: string[];
}

/** What a request must look like: a substring of its RESP bytes, or a predicate. */
export type RequestMatch = string | ((command: ProxiedCommand) => boolean);

export interface DropRule {
  /** Resolves with the matched command once its reply was executed upstream and withheld from the client. */
  readonly dropped: Promise<ProxiedCommand>;
  readonly fired: boolean;
  /** Disarms the rule if it has not fired yet. */
  cancel(): void;
}

export interface DropReplyOptions {
  /** Drop even when the reply is an error (default: error replies pass, the rule stays armed). */
  errors?: boolean;
}

export interface TcpProxy {
  readonly host: string;
  readonly port: number;
  /** Client connections currently open. */
  readonly connections: number;
  /** Destroys every open connection (both sides); new connections are still accepted. */
  cut(): void;
  /**
   * An outage: `down(true)` destroys every open connection and refuses new ones (each is closed at once)
   * until `down(false)`; the port stays bound, so clients reconnect to the same address.
   */
  down(refuse: boolean): void;
  /**
   * A silent network: while `stall(true)`, bytes both ways are dropped and new connections are accepted,
   * but nothing is closed, so the peers wait on their own timeouts (a host that stopped answering). Bytes
   * lost meanwhile leave open connections unusable: `cut()` them after `stall(false)`.
   */
  stall(silent: boolean): void;
  /**
   * Arms a rule for the next command (on any connection) matching `match`: the request is forwarded, and
   * once its reply is back the client socket is destroyed before that reply, or any reply to a request
   * of the same packet, reaches the client. So the command ran in Redis but the client never learnt it;
   * ioredis re-sends it after reconnecting. (A packet is one ioredis pipeline write: ioredis aborts a
   * pipeline whose first replies arrived instead of re-sending it.) Subscribed connections pass through
   * untouched, as pushed messages are not replies.
   */
  dropReply(match: RequestMatch, options?: DropReplyOptions): DropRule;
  /** Stops listening and destroys every connection. */
  close(): Promise<void>;
}

/** End offset of the RESP value starting at `at`, or -1 while incomplete. Inline commands end at CRLF. */
export function respEnd(buf: Buffer, at: number): number {
  if (at >= buf.length) return -1;
  const eol = buf.indexOf('\r\n', at);
  if (eol < 0) return -1;
  const type = String.fromCharCode(buf[at]);
  const n = Number(buf.toString('latin1', at + 1, eol));
  switch (type) {
    case '$':
    case '=':
    case '!': {
      if (n < 0) return eol + 2;
      const end = eol + 2 + n + 2;
      return end <= buf.length ? end : -1;
    }
    case '*':
    case '~':
    case '>':
    case '%': {
      let pos = eol + 2;
      const items = type === '%' ? n * 2 : n;
      for (let i = 0; i < items; i++) {
        pos = respEnd(buf, pos);
        if (pos < 0) return -1;
      }
      return pos;
    }
    default:
      return eol + 2;
  }
}

/** The bulk strings of a RESP array request (an inline command: its words). */
export function requestArgs(raw: Buffer): string[] {
  if (raw[0] !== 0x2a) return raw.toString('latin1').trim().split(/\s+/);
  const args: string[] = [];
  let pos = raw.indexOf('\r\n') + 2;
  while (pos < raw.length) {
    const eol = raw.indexOf('\r\n', pos);
    const len = Number(raw.toString('latin1', pos + 1, eol));
    args.push(raw.toString('latin1', eol + 2, eol + 2 + len));
    pos = eol + 2 + len + 2;
  }
  return args;
}

/** @internal */
export interface Rule {
  match: RequestMatch;
  errors: boolean;
  state: 'armed' | 'claimed' | 'fired' | 'cancelled';
  resolve(command: ProxiedCommand): void;
}

interface Pending {
  /** First request of the packet that held the matched one: replies from there on are withheld. */
  from: number;
  index: number;
  rule: Rule;
  command: ProxiedCommand;
}

class Link {
  private requestBuf = Buffer.alloc(0);
  private replyBuf = Buffer.alloc(0);
  private requests = 0;
  private replies = 0;
  private readonly pending: Pending[] = [];

  constructor(
    readonly client: net.Socket,
    readonly upstream: net.Socket,
    private readonly rules: Rule[],
    private passthrough = false,
    stalled: () => boolean = () => false,
  ) {
    client.on('data', (chunk: Buffer) => stalled() || this.onRequest(chunk));
    upstream.on('data', (chunk: Buffer) => stalled() || this.onReply(chunk));
  }

  destroy(): void {
    this.client.destroy();
    this.upstream.destroy();
    this.releasePending();
  }

  /** Rules claimed here whose reply was never dropped may match again, on any connection. */
  private releasePending(): void {
    for (const p of this.pending.splice(0)) if (p.rule.state === 'claimed') p.rule.state = 'armed';
  }

  private onRequest(chunk: Buffer): void {
    this.upstream.write(chunk);
    if (this.passthrough) return;
    this.requestBuf = this.requestBuf.length ? Buffer.concat([this.requestBuf, chunk]) : chunk;
    const packetStart = this.requests;
    let pos = 0;
    for (let end = respEnd(this.requestBuf, pos); end >= 0; end = respEnd(this.requestBuf, pos)) {
      const raw = Buffer.from(this.requestBuf.subarray(pos, end));
      pos = end;
      const index = this.requests++;
      const command = { raw, args: requestArgs(raw) };
      if (/^[ps]?subscribe$/i.test(command.args[0] ?? '')) return this.passThrough();
      const rule = this.rules.find((r) => r.state === 'armed' && matches(r.match, command));
      if (rule) {
        rule.state = 'claimed';
        this.pending.push({ from: packetStart, index, rule, command });
      }
    }
    this.requestBuf = this.requestBuf.subarray(pos);
  }

  /** A subscribed connection: from now on bytes flow untouched both ways. */
  private passThrough(): void {
    this.passthrough = true;
    this.requestBuf = Buffer.alloc(0);
    this.releasePending();
    if (this.replyBuf.length) this.client.write(this.replyBuf);
    this.replyBuf = Buffer.alloc(0);
  }

  private onReply(chunk: Buffer): void {
    if (this.passthrough) {
      this.client.write(chunk);
      return;
    }
    this.replyBuf = this.replyBuf.length ? Buffer.concat([this.replyBuf, chunk]) : chunk;
    this.flushReplies();
  }

  /**
   * Forwards the complete replies before the first withheld one; once the matched command's own reply is
   * complete, drops it and the withheld ones before it by destroying the connection.
   */
  private flushReplies(): void {
    const first = this.pending[0];
    let pos = 0;
    let index = this.replies;
    let forwardEnd = 0;
    let forwarded = 0;
    for (let end = respEnd(this.replyBuf, pos); end >= 0; end = respEnd(this.replyBuf, pos)) {
      if (first && index === first.index) {
        if (this.replyBuf[pos] === 0x2d && !first.rule.errors) {
          // An error reply (e.g. NOSCRIPT before ioredis falls back to EVAL): nothing ran; keep the rule armed.
          if (first.rule.state === 'claimed') first.rule.state = 'armed';
          this.pending.shift();
          return this.flushReplies();
        }
        if (first.rule.state !== 'claimed') {
          this.pending.shift(); // cancelled meanwhile: let it pass
          return this.flushReplies();
        }
        if (forwardEnd > 0) this.client.write(this.replyBuf.subarray(0, forwardEnd));
        first.rule.state = 'fired';
        this.pending.shift();
        this.destroy();
        first.rule.resolve(first.command);
        return;
      }
      pos = end;
      index++;
      if (!first || index <= first.from) {
        forwardEnd = pos;
        forwarded = index - this.replies;
      }
    }
    if (forwardEnd > 0) this.client.write(this.replyBuf.subarray(0, forwardEnd));
    this.replyBuf = this.replyBuf.subarray(forwardEnd);
    this.replies += forwarded;
  }
}

function matches(match: RequestMatch, command: ProxiedCommand): boolean {
  return typeof match === 'string' ? command.raw.includes(match, 0, 'latin1') : match(command);
}

/** Drop rules; proxies sharing one set (e.g. one per cluster master) fire each rule once in all. */
export class ProxyRules {
  /** @internal */
  readonly list: Rule[] = [];

  /** See `TcpProxy.dropReply`. */
  dropReply(match: RequestMatch, options: DropReplyOptions = {}): DropRule {
    let resolve!: (command: ProxiedCommand) => void;
    const dropped = new Promise<ProxiedCommand>((r) => (resolve = r));
    const rule: Rule = { match, errors: options.errors ?? false, state: 'armed', resolve };
    this.list.push(rule);
    return {
      dropped,
      get fired() {
        return rule.state === 'fired';
      },
      cancel() {
        if (rule.state !== 'fired') rule.state = 'cancelled';
      },
    };
  }
}

export interface TcpProxyOptions {
  /** The port to listen on (e.g. to bring back a proxy that was closed); default: a free one. */
  port?: number;
  /** Forward bytes untouched, without parsing RESP (another protocol, e.g. PostgreSQL's); no drop rules. */
  raw?: boolean;
}

/** Starts a proxy on a 127.0.0.1 port that forwards every connection to `target`. */
export async function startTcpProxy(
  target: { host?: string; port: number },
  rules = new ProxyRules(),
  options: TcpProxyOptions = {},
): Promise<TcpProxy> {
  const links = new Set<Link>();
  let refusing = false;
  let stalled = false;
  const server = net.createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = net.connect({ host: target.host ?? HOST, port: target.port });
    const link = new Link(client, upstream, rules.list, options.raw, () => stalled);
    links.add(link);
    const end = (): void => {
      if (links.delete(link)) link.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.setNoDelay(true);
      socket.on('error', end);
      socket.on('close', end);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: HOST, port: options.port ?? 0 }, () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  const cut = (): void => {
    for (const link of [...links]) link.destroy();
    links.clear();
  };
  return {
    host: HOST,
    port,
    get connections() {
      return links.size;
    },
    cut,
    down(refuse: boolean) {
      refusing = refuse;
      if (refuse) cut();
    },
    stall(silent: boolean) {
      stalled = silent;
    },
    dropReply: (match, options) => rules.dropReply(match, options),
    close() {
      cut();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
