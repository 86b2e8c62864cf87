import { ChildProcess, execFile, spawn } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { withParentDeathSignal } from './child';
import { sleep } from './wait';

export const HOST = '127.0.0.1';

export interface RedisServerOptions {
  /** Fixed port; default: a free one (its +10000 cluster bus port is free too). */
  port?: number;
  /** Data/log directory; default: a fresh folder under os.tmpdir(), deleted by remove(). */
  dir?: string;
  /** appendonly yes + appendfsync always. */
  appendonly?: boolean;
  /** Appended last, so they override the defaults. */
  extraArgs?: string[];
}

export interface RedisServerHandle {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  readonly logFile: string;
  /** Pid of the current redis-server process (changes on restart). */
  readonly pid: number;
  isRunning(): boolean;
  /** The last `lines` lines of its log file and of its output (for a failure's message). */
  logTail(lines?: number): string;
  /** SIGTERM (after SIGCONT), SIGKILL after 5s. Idempotent. Keeps dir so restart() still works. */
  stop(): Promise<void>;
  /** Sends a signal (default SIGKILL) to the current process; no-op when it already exited. */
  kill(signal?: NodeJS.Signals): void;
  /**
   * stop() (no-op if already dead) then start again on the same port, dir and args (`extraArgs` appended
   * for this start only: a later directive overrides an earlier one); waits for PING.
   */
  restart(extraArgs?: string[]): Promise<void>;
  /** stop() and delete dir if it was created by startRedisServer. Idempotent. */
  remove(): Promise<void>;
}

export interface RedisClusterHandle {
  nodes: { host: string; port: number }[];
  servers: RedisServerHandle[];
  /** Stops every node and removes their dirs. Idempotent. */
  stop(): Promise<void>;
}

// ---------------------------------------------------------------- ports

const handedOut = new Set<number>();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: HOST, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** Ports 10000 to 22767 (their bus ports below 32768), in slices: 0 for a process outside Jest's workers. */
const PORT_SLICES = 9;

/** This process's slice of the port range: Jest worker k (1, 2, ...) gets slice 1 + (k - 1) mod 8. */
function portSlice(): { first: number; size: number } {
  const size = Math.floor(12_768 / PORT_SLICES);
  const worker = Number(process.env.JEST_WORKER_ID);
  const slice = Number.isInteger(worker) && worker > 0 ? 1 + ((worker - 1) % (PORT_SLICES - 1)) : 0;
  return { first: 10_000 + slice * size, size };
}

function ephemeralPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen({ port: 0, host: HOST, exclusive: true }, () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A currently free loopback port whose cluster bus port (port + 10000) is free as well, both below the
 * ephemeral range (32768 and up): a port the kernel hands out to outgoing connections could be taken by one
 * between this check and the server's listen (seen: a scheduler child's EADDRINUSE under a full suite). Each
 * Jest worker draws from a slice of its own (see portSlice): two workers could otherwise both find a port
 * free and hand it out before either listened (seen: EADDRINUSE of a scheduler child, service-limits).
 */
export async function getFreePort(): Promise<number> {
  const { first, size } = portSlice();
  for (let attempt = 0; attempt < 500; attempt++) {
    const port = first + Math.floor(Math.random() * size);
    if (handedOut.has(port) || handedOut.has(port + 10000)) continue;
    if (!(await canListen(port)) || !(await canListen(port + 10000))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('getFreePort: no free port pair (p, p+10000) below the ephemeral range found in 500 attempts');
}

// ---------------------------------------------------------------- minimal RESP client

/** Sends one command and returns a simple/bulk/integer reply as a string (null for nil). Error replies reject. */
export function redisCommand(port: number, args: string[], timeoutMs = 1000): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: HOST, port });
    let buf = Buffer.alloc(0);
    const done = (err: Error | null, value?: string | null): void => {
      sock.destroy();
      if (err) reject(err);
      else resolve(value ?? null);
    };
    sock.setTimeout(timeoutMs, () => done(new Error(`redis ${HOST}:${port} ${args[0]}: timeout`)));
    sock.once('error', (err) => done(err));
    sock.once('connect', () => {
      sock.write(`*${args.length}\r\n` + args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join(''));
    });
    sock.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const eol = buf.indexOf('\r\n');
      if (eol < 0) return;
      const type = String.fromCharCode(buf[0]);
      const line = buf.subarray(1, eol).toString('utf8');
      if (type === '+' || type === ':') return done(null, line);
      if (type === '-') return done(new Error(`redis ${HOST}:${port} ${args[0]}: ${line}`));
      if (type === '$') {
        const len = Number(line);
        if (len < 0) return done(null, null);
        if (buf.length >= eol + 2 + len + 2) done(null, buf.subarray(eol + 2, eol + 2 + len).toString('utf8'));
        return;
      }
      done(new Error(`redis ${HOST}:${port} ${args[0]}: unsupported reply type ${JSON.stringify(type)}`));
    });
  });
}

// ---------------------------------------------------------------- server

interface Incarnation {
  proc: ChildProcess;
  pid: number;
  exit: Promise<void>;
  exited: boolean;
  output: string;
  stopping?: Promise<void>;
}

const registry = new Set<RedisServer>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort (works in jest's main process / plain node; pdeathsig covers sandboxed test files).
  process.on('exit', () => {
    for (const server of registry) server.killSync();
  });
}

function tailLines(text: string, lines = 40): string {
  return text.split('\n').slice(-lines).join('\n');
}

function withTimeout(p: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]).finally(() => clearTimeout(timer));
}

class StartError extends Error {
  constructor(message: string, readonly addressInUse: boolean) {
    super(message);
  }
}

class RedisServer implements RedisServerHandle {
  readonly host = HOST;
  readonly url: string;
  readonly logFile: string;
  private current?: Incarnation;
  private removed = false;

  constructor(
    readonly port: number,
    readonly dir: string,
    private readonly ownsDir: boolean,
    private readonly args: string[],
  ) {
    this.url = `redis://${HOST}:${port}`;
    this.logFile = path.join(dir, 'redis.log');
    installExitHook();
    registry.add(this);
  }

  get pid(): number {
    return this.current?.pid ?? -1;
  }

  isRunning(): boolean {
    return !!this.current && !this.current.exited;
  }

  logTail(lines = 40): string {
    let log = '';
    try {
      log = fs.readFileSync(this.logFile, 'utf8');
    } catch {
      /* no log yet */
    }
    const out = this.current?.output.trim();
    return tailLines(log, lines) + (out ? `\n[stdout/stderr]\n${tailLines(out, lines)}` : '');
  }

  /** Spawns redis-server and waits (≤ timeoutMs) until it answers PING. */
  async launch(timeoutMs = 15_000, extraArgs: string[] = []): Promise<void> {
    if (this.removed) throw new Error(`redis ${this.url} was removed`);
    // Never mistake another server (e.g. a shared one) on this port for ours.
    if (!(await canListen(this.port))) {
      throw new StartError(`redis-server: port ${HOST}:${this.port} is already in use`, true);
    }
    const [cmd, argv] = withParentDeathSignal('redis-server', [...this.args, ...extraArgs]);
    const proc = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    const inc: Incarnation = { proc, pid: proc.pid ?? -1, exited: false, output: '', exit: Promise.resolve() };
    inc.exit = new Promise<void>((resolve) => {
      const finish = (): void => {
        inc.exited = true;
        resolve();
      };
      proc.once('exit', finish);
      proc.once('error', (err) => {
        inc.output += `\n[spawn error] ${err.message}`;
        if (!proc.pid) finish();
      });
    });
    const collect = (chunk: Buffer): void => {
      inc.output = (inc.output + chunk.toString('utf8')).slice(-16_384);
    };
    proc.stdout?.on('data', collect);
    proc.stderr?.on('data', collect);
    this.current = inc;

    const deadline = Date.now() + timeoutMs;
    let lastError = '';
    while (Date.now() < deadline) {
      if (inc.exited) {
        await withTimeout(new Promise<void>((r) => proc.once('close', () => r())), 200);
        const tail = this.logTail();
        throw new StartError(
          `redis-server on port ${this.port} exited early (code ${proc.exitCode}, signal ${proc.signalCode}). Log tail:\n${tail}`,
          /address already in use/i.test(tail),
        );
      }
      let info: string | null = null;
      try {
        if ((await redisCommand(this.port, ['PING'], 500)) === 'PONG') {
          info = (await redisCommand(this.port, ['INFO', 'server'], 1000)) ?? '';
        }
      } catch (err) {
        lastError = (err as Error).message;
      }
      if (info !== null) {
        if (info.includes(`process_id:${inc.pid}\r\n`)) return;
        await this.stop();
        throw new Error(`a different redis-server answers on ${HOST}:${this.port} (ours is pid ${inc.pid})`);
      }
      await sleep(20);
    }
    await this.stop();
    throw new Error(`redis-server on port ${this.port} did not answer PING within ${timeoutMs}ms (${lastError}). Log tail:\n${this.logTail()}`);
  }

  stop(): Promise<void> {
    const inc = this.current;
    if (!inc || inc.exited) return Promise.resolve();
    inc.stopping ??= (async () => {
      for (const signal of ['SIGCONT', 'SIGTERM'] as const) this.signal(inc, signal);
      if (await withTimeout(inc.exit, 5000)) return;
      this.signal(inc, 'SIGKILL');
      if (!(await withTimeout(inc.exit, 5000))) throw new Error(`redis-server pid ${inc.pid} did not exit after SIGKILL`);
    })();
    return inc.stopping;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.current) this.signal(this.current, signal);
  }

  async restart(extraArgs?: string[]): Promise<void> {
    await this.stop();
    await this.launch(undefined, extraArgs);
  }

  async remove(): Promise<void> {
    if (this.removed) return;
    await this.stop();
    this.removed = true;
    registry.delete(this);
    handedOut.delete(this.port);
    if (this.ownsDir) await fs.promises.rm(this.dir, { recursive: true, force: true, maxRetries: 3 });
  }

  /** Synchronous last-resort cleanup for process 'exit' handlers. */
  killSync(): void {
    if (this.current) this.signal(this.current, 'SIGKILL');
    if (this.ownsDir) {
      try {
        fs.rmSync(this.dir, { recursive: true, force: true });
      } catch {
        /* best effort */
      }
    }
  }

  private signal(inc: Incarnation, signal: NodeJS.Signals): void {
    if (inc.exited || inc.pid <= 0) return;
    try {
      process.kill(inc.pid, signal);
    } catch {
      /* already gone */
    }
  }
}

function buildArgs(port: number, dir: string, opts: RedisServerOptions): string[] {
  return [
    '--port', String(port),
    '--bind', HOST,
    '--daemonize', 'no',
    '--save', '',
    '--dir', dir,
    '--logfile', path.join(dir, 'redis.log'),
    '--appendonly', opts.appendonly ? 'yes' : 'no',
    ...(opts.appendonly ? ['--appendfsync', 'always'] : []),
    '--enable-debug-command', 'local',
    ...(opts.extraArgs ?? []),
  ];
}

/** Spawns a child (non-daemonized) redis-server on 127.0.0.1 and waits until it answers PING. */
export async function startRedisServer(opts: RedisServerOptions = {}): Promise<RedisServerHandle> {
  for (let attempt = 1; ; attempt++) {
    const port = opts.port ?? (await getFreePort());
    const dir = opts.dir ?? (await fs.promises.mkdtemp(path.join(os.tmpdir(), 'dq-redis-')));
    await fs.promises.mkdir(dir, { recursive: true });
    const server = new RedisServer(port, dir, !opts.dir, buildArgs(port, dir, opts));
    try {
      await server.launch();
      return server;
    } catch (err) {
      await server.remove();
      // Another process grabbed the port between getFreePort() and bind: try another one.
      const retry = err instanceof StartError && err.addressInUse && opts.port === undefined && attempt < 3;
      if (!retry) throw err;
    }
  }
}

function runRedisCli(args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('redis-cli', args, { timeout: timeoutMs, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`redis-cli ${args.join(' ')} failed: ${err.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Masters and their slot ranges, as seen by one node (independent of which node is asked). */
function slotOwnership(clusterNodes: string): string {
  return clusterNodes
    .split('\n')
    .map((line) => line.trim().split(' '))
    .filter((parts) => parts.length > 8)
    .map((parts) => `${parts[0]}@${parts[1].split('@')[0]}=${parts.slice(8).join(',')}`)
    .sort()
    .join(' ');
}

async function clusterConverged(ports: number[], withSlots = ports.length): Promise<boolean> {
  const views: string[] = [];
  for (const port of ports) {
    const info = (await redisCommand(port, ['CLUSTER', 'INFO'])) ?? '';
    if (!/cluster_state:ok/.test(info) || !/cluster_slots_ok:16384\b/.test(info)) return false;
    if (!new RegExp(`cluster_known_nodes:${ports.length}\\b`).test(info)) return false;
    views.push(slotOwnership((await redisCommand(port, ['CLUSTER', 'NODES'])) ?? ''));
  }
  const expectedAddrs = ports.map((p) => `@${HOST}:${p}=`);
  const owners = expectedAddrs.filter((a) => views[0].includes(a)).length;
  return views.every((v) => v === views[0]) && owners === withSlots;
}

/**
 * Starts `masters` (≥3) cluster-enabled servers and joins them into one cluster, with `replicas` replicas per
 * master (default none; `nodes` then lists masters and replicas). `nodeTimeoutMs`: cluster-node-timeout.
 */
export async function startRedisCluster(opts: { masters?: number; replicas?: number; nodeTimeoutMs?: number } = {}): Promise<RedisClusterHandle> {
  const replicas = opts.replicas ?? 0;
  const masters = (opts.masters ?? 3) * (1 + replicas);
  if (masters / (1 + replicas) < 3) throw new Error('startRedisCluster: redis-cli --cluster create needs at least 3 masters');
  const clusterArgs = [
    '--cluster-enabled', 'yes',
    '--cluster-config-file', 'nodes.conf',
    '--cluster-node-timeout', String(opts.nodeTimeoutMs ?? 2000),
    '--cluster-announce-ip', HOST,
  ];
  const started = await Promise.allSettled(
    Array.from({ length: masters }, () => startRedisServer({ extraArgs: clusterArgs })),
  );
  const servers = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  let stopping: Promise<void> | undefined;
  const handle: RedisClusterHandle = {
    nodes: servers.map((s) => ({ host: HOST, port: s.port })),
    servers,
    stop: () => (stopping ??= Promise.all(servers.map((s) => s.remove())).then(() => undefined)),
  };
  try {
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const ports = servers.map((s) => s.port);
    await runRedisCli(
      ['--cluster', 'create', ...ports.map((p) => `${HOST}:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes'],
      30_000,
    );
    const deadline = Date.now() + 20_000;
    let lastError = '';
    for (;;) {
      try {
        if (await clusterConverged(ports, masters / (1 + replicas))) break;
      } catch (err) {
        lastError = (err as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`cluster ${ports.join(',')} did not converge within 20s ${lastError}`);
      await sleep(100);
    }
    return handle;
  } catch (err) {
    await handle.stop();
    throw err;
  }
}
