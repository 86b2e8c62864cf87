import { execFile, spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as tls from 'tls';
import { withParentDeathSignal } from './child';
import { getFreePort, HOST, redisCommand } from './redis-server';
import { sleep } from './wait';

/*
 * Production-like Redis for tests: a TLS-only server with a throw-away CA, and the least-privilege ACL
 * rule the library needs.
 */

/** Whether `openssl` is on PATH (the TLS test needs it to make certificates). */
export function hasOpenssl(): boolean {
  return spawnSync('openssl', ['version'], { stdio: 'ignore', timeout: 5000 }).status === 0;
}

function openssl(args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('openssl', args, { cwd, timeout: 30_000, killSignal: 'SIGKILL' }, (err, _stdout, stderr) =>
      err ? reject(new Error(`openssl ${args.join(' ')} failed: ${err.message}\n${stderr}`)) : resolve(),
    );
  });
}

export interface TestCertificates {
  dir: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  /** The CA certificate (PEM), for the client's `tls: { ca }`. */
  ca: string;
}

/** A CA and a server certificate for 127.0.0.1 (IP SAN), valid one day, in a fresh temp dir. */
export async function makeCertificates(): Promise<TestCertificates> {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'dq-tls-'));
  await openssl(['req', '-x509', '-new', '-nodes', '-newkey', 'rsa:2048', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=dq-test-ca'], dir);
  await openssl(['req', '-new', '-nodes', '-newkey', 'rsa:2048', '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${HOST}`], dir);
  await fs.promises.writeFile(path.join(dir, 'san.cnf'), `subjectAltName=IP:${HOST}\n`);
  await openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '1', '-extfile', 'san.cnf'], dir);
  const caFile = path.join(dir, 'ca.crt');
  return { dir, caFile, certFile: path.join(dir, 'server.crt'), keyFile: path.join(dir, 'server.key'), ca: await fs.promises.readFile(caFile, 'utf8') };
}

/** PING over TLS; resolves true on PONG. */
function tlsPing(port: number, ca: string, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: HOST, port, ca });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('secureConnect', () => socket.write('*1\r\n$4\r\nPING\r\n'));
    socket.once('data', (chunk) => done(chunk.toString().startsWith('+PONG')));
  });
}

export interface TlsRedisServer {
  port: number;
  pid: number;
  certificates: TestCertificates;
  /** SIGTERM, SIGKILL after 5 s; removes the certificates. Idempotent. */
  stop(): Promise<void>;
}

/** A redis-server that only speaks TLS (`--port 0 --tls-port`), clients not authenticated by certificate. */
export async function startTlsRedisServer(): Promise<TlsRedisServer> {
  const certificates = await makeCertificates();
  const port = await getFreePort();
  const [cmd, argv] = withParentDeathSignal('redis-server', [
    '--port', '0', '--tls-port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', certificates.dir,
    '--tls-cert-file', certificates.certFile, '--tls-key-file', certificates.keyFile, '--tls-ca-cert-file', certificates.caFile,
    '--tls-auth-clients', 'no',
  ]);
  const proc = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout?.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-8000)));
  proc.stderr?.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-8000)));
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    proc.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (!exited && proc.pid) process.kill(proc.pid, 'SIGTERM');
      const timer = setTimeout(() => !exited && proc.pid && process.kill(proc.pid, 'SIGKILL'), 5000);
      await Promise.race([exit, sleep(10_000)]);
      clearTimeout(timer);
      await fs.promises.rm(certificates.dir, { recursive: true, force: true });
    })());
  const deadline = Date.now() + 15_000;
  while (!(await tlsPing(port, certificates.ca))) {
    if (exited || Date.now() > deadline) {
      await stop();
      throw new Error(`TLS redis-server on port ${port} did not answer PING (exited: ${exited}):\n${output}`);
    }
    await sleep(50);
  }
  return { port, pid: proc.pid ?? -1, certificates, stop };
}

/**
 * The least-privilege ACL rule for a user of the library under `prefix` (the module's `keyPrefix`), for
 * `ACL SETUSER <name> on ><password> <rule>`. Commands: what ioredis sends on connecting (CLIENT SETNAME,
 * INFO for its ready check; CLUSTER INFO and CLUSTER SLOTS on a cluster), the scripts (EVALSHA, and EVAL
 * when Redis does not know a script yet), SUBSCRIBE and PUBLISH, the plain commands the library sends, and
 * those its Lua scripts call (ACL checks these too). Keys: `<prefix>:{<prefix>:<type, qId or
 * qId:partition>}:*`; channels: the delay queue's wake-ups and the route queue's events.
 */
export function libraryAclRule(prefix: string): string {
  const connection = ['client|setname', 'info', 'cluster|info', 'cluster|slots'];
  const messaging = ['evalsha', 'eval', 'subscribe', 'unsubscribe', 'publish'];
  const direct = [
    'get', 'set', 'del', 'pexpire', 'hget', 'hgetall', 'hset', 'hdel', 'hlen', 'llen', 'lrange', 'ltrim', 'zrange', 'zrem', 'unlink',
    'xread', 'xrevrange', 'xrange', 'xlen', 'xtrim', 'smembers',
  ];
  const inScripts = [
    'time', 'exists', 'incrby', 'hsetnx', 'hmget', 'hincrby', 'hkeys', 'lindex', 'lpop', 'lpos', 'lpush', 'rpush',
    'zadd', 'zcard', 'zcount', 'zmscore', 'zrangebyscore', 'zremrangebyscore', 'zscore', 'xadd', 'sadd', 'incr', 'hexists',
    'zincrby', 'zrevrange', 'hscan', 'persist', 'pttl', 'hrandfield', 'zrangebylex',
  ];
  const commands = [...new Set([...connection, ...messaging, ...direct, ...inScripts])];
  return [
    'resetkeys', 'resetchannels', '-@all', ...commands.map((c) => `+${c}`),
    `~${prefix}:{${prefix}:*`, `&${prefix}:events:*`, `&${prefix}:route:*`, `&${prefix}:svc:*`,
  ].join(' ');
}

/** Creates the ACL user on every node (a cluster's nodes do not share ACLs). */
export async function setAclUser(ports: number[], user: string, password: string, rule: string): Promise<void> {
  for (const port of ports) await redisCommand(port, ['ACL', 'SETUSER', user, 'reset', 'on', `>${password}`, ...rule.split(' ')]);
}
