import { ChildProcess, execFile, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Client } from 'pg';
import { withParentDeathSignal } from './child';
import { getFreePort, HOST } from './redis-server';
import { sleep } from './wait';

/*
 * A private PostgreSQL server for tests that stop, pause or restart it (never the machine's own on 5432):
 * initdb into a fresh temp folder, trust auth, on a free loopback port. Every process is signalled by its
 * pid (the postmaster's and its children's, read from /proc), never by name.
 */

/** The PostgreSQL binaries (DQ_TEST_PG_BIN overrides). */
export const PG_BIN = process.env.DQ_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface PgServerHandle {
  readonly host: string;
  readonly port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  readonly url: string;
  readonly dir: string;
  /** The postmaster's pid (changes at each start). */
  readonly pid: number;
  isRunning(): boolean;
  /** SIGSTOP to the postmaster and every process of it: open connections get no answer, new ones hang. */
  pause(): void;
  /** SIGCONT to every process paused by pause() (and the postmaster's children now). */
  resume(): void;
  /** A crash: SIGKILL to the postmaster and every process of it; waits until they are gone. */
  kill(): Promise<void>;
  /** Fast shutdown (SIGINT: sessions ended, a checkpoint), SIGKILL after 10 s; waits until it is gone. */
  stop(): Promise<void>;
  /** Starts the server again on the same folder and port (after kill() or stop()); waits until it answers. */
  start(): Promise<void>;
  /** stop() and delete the folder. Idempotent. */
  remove(): Promise<void>;
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** [command, args] running `bin` as the postgres OS user when this process is root (setpriv execs: same pid). */
function asPostgres(bin: string, args: string[]): [string, string[]] {
  const file = path.join(PG_BIN, bin);
  return asRoot ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--clear-groups', '--', file, ...args]] : [file, args];
}

function run(command: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z');
  } catch {
    return false;
  }
}

/** The pids whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, the last ')' ends it.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return found;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* already gone */
  }
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`pg-server: ${what} (after ${timeoutMs} ms)`);
    await sleep(50);
  }
}

async function answers(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 1000, query_timeout: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** initdb into a fresh temp folder and start the server on a free port; resolves once it answers. */
export async function startPgServer(): Promise<PgServerHandle> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dq-test-pg-'));
  const data = path.join(dir, 'data');
  if (asRoot) await run('chown', ['postgres:postgres', dir], 5000);
  const [initCmd, initArgs] = asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '--no-instructions', '-E', 'UTF8']);
  await run(initCmd, initArgs, 120_000);
  const port = await getFreePort();
  const url = `postgres://postgres@${HOST}:${port}/postgres`;
  const logFile = path.join(dir, 'postgres.log');
  let proc: ChildProcess | undefined;
  let paused: number[] = [];
  let removed = false;

  const processes = (): number[] => (proc?.pid && alive(proc.pid) ? [proc.pid, ...childrenOf(proc.pid)] : []);
  const exited = (): boolean => !proc || proc.exitCode !== null || proc.signalCode !== null;

  const start = async (): Promise<void> => {
    if (!exited()) throw new Error('pg-server: already running');
    const [cmd, args] = asPostgres('postgres', [
      '-D', data, '-p', String(port), '-k', dir, '-c', `listen_addresses=${HOST}`,
      '-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'max_connections=50',
    ]);
    // NOTE: pdeathsig: the postmaster dies with the test process (its backends follow it).
    const [wrapped, wrappedArgs] = withParentDeathSignal(cmd, args);
    const log = fs.openSync(logFile, 'a');
    proc = spawn(wrapped, wrappedArgs, { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    const started = proc;
    await until(async () => {
      if (started.exitCode !== null || started.signalCode !== null) {
        throw new Error(`pg-server: postgres exited (${started.exitCode ?? started.signalCode}):\n${fs.readFileSync(logFile, 'utf8').slice(-3000)}`);
      }
      return answers(url);
    }, 60_000, 'postgres did not answer');
  };

  const waitGone = async (pids: number[], timeoutMs: number): Promise<boolean> => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (exited() && pids.every((pid) => !alive(pid))) return true;
      await sleep(50);
    }
    return false;
  };

  const kill = async (): Promise<void> => {
    const pids = processes();
    for (const pid of pids) signal(pid, 'SIGKILL');
    paused = [];
    if (!(await waitGone(pids, 10_000))) throw new Error(`pg-server: processes ${pids.join(', ')} still alive after SIGKILL`);
  };

  const stop = async (): Promise<void> => {
    if (exited()) return;
    const pids = processes();
    for (const pid of pids) signal(pid, 'SIGCONT');
    paused = [];
    signal(proc!.pid!, 'SIGINT');
    if (!(await waitGone(pids, 10_000))) await kill();
  };

  await start();
  return {
    host: HOST,
    port,
    url,
    dir,
    get pid() {
      return proc?.pid ?? -1;
    },
    isRunning: () => !exited(),
    pause() {
      // The postmaster first (it forks no more), then its processes.
      if (exited()) throw new Error('pg-server: not running');
      signal(proc!.pid!, 'SIGSTOP');
      const pids = processes();
      for (const pid of pids) signal(pid, 'SIGSTOP');
      paused = pids;
    },
    resume() {
      for (const pid of new Set([...paused, ...processes()])) signal(pid, 'SIGCONT');
      paused = [];
    },
    kill,
    stop,
    start,
    async remove() {
      if (removed) return;
      removed = true;
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs one statement on a connection of its own to `url` (bounded connect and query time). */
export async function queryOn<R extends object = Record<string, unknown>>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000, query_timeout: 30_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}
