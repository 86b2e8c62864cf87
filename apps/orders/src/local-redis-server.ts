import { ChildProcess, spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import type { Logger } from '@nestjs/common';
import { StartupError } from './env';
import { pingRedis } from './redis-ping';

const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 10_000;

/** redis-server is not on PATH. The message says how to install it or how to use another Redis. */
export class RedisServerNotInstalledError extends StartupError {
  constructor() {
    super(
      [
        'redis-server is not installed (or not on PATH), and no Redis was found to use.',
        'Install it:',
        '  Debian/Ubuntu:  sudo apt-get install -y redis-server',
        '  macOS:          brew install redis',
        'or point the app at an existing Redis:',
        '  REDIS_URL=redis://host:6379 npm start',
      ].join('\n'),
    );
  }
}

export interface LocalRedis {
  url: string;
  /** undefined when a server already running on the port was reused. */
  pid?: number;
  /** Stops the server started here (SIGTERM, then SIGKILL after 10 s); idempotent. */
  stop(): Promise<void>;
}

/** On Linux, `setpriv --pdeathsig SIGTERM` makes the kernel stop redis-server if this process dies hard. */
function withParentDeathSignal(command: string, args: string[]): [string, string[]] {
  if (process.platform !== 'linux') return [command, args];
  const probe = spawnSync('setpriv', ['--pdeathsig', 'SIGTERM', '--', 'true'], { stdio: 'ignore', timeout: 5000 });
  return probe.status === 0 ? ['setpriv', ['--pdeathsig', 'SIGTERM', '--', command, ...args]] : [command, args];
}

/** What was appended to `file` after byte `from` (the last 20 lines of it). */
function logSince(file: string, from: number): string {
  try {
    return fs.readFileSync(file).subarray(from).toString('utf8').trimEnd().split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}

function exitOf(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));
}

async function waitUntilUp(child: ChildProcess, port: number): Promise<boolean> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
    if ((await pingRedis(HOST, port, 300)) === '+PONG') return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/**
 * Starts `redis-server` on 127.0.0.1:`port` with its data (AOF) and log in `dataDir`, in its own
 * process group so a Ctrl-C in the terminal reaches only the app, which stops it after shutting down.
 */
export async function startLocalRedis(port: number, dataDir: string, logger: Logger): Promise<LocalRedis> {
  const url = `redis://${HOST}:${port}`;
  const version = spawnSync('redis-server', ['--version'], { encoding: 'utf8', timeout: 5000 });
  if ((version.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') throw new RedisServerNotInstalledError();

  if ((await pingRedis(HOST, port)) === '+PONG') {
    logger.warn(`A Redis already answers on ${HOST}:${port} (left over from an earlier run?): using it; it will NOT be stopped on exit`);
    return { url, stop: async () => undefined };
  }

  fs.mkdirSync(dataDir, { recursive: true });
  const logFile = path.join(dataDir, 'redis.log');
  const logStart = fs.existsSync(logFile) ? fs.statSync(logFile).size : 0;
  const args = ['--port', String(port), '--bind', HOST, '--dir', dataDir, '--appendonly', 'yes', '--logfile', logFile, '--daemonize', 'no'];
  const [command, commandArgs] = withParentDeathSignal('redis-server', args);
  const child = spawn(command, commandArgs, { cwd: dataDir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));

  const up = await Promise.race([waitUntilUp(child, port), spawnError]);
  if (up !== true) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    const why =
      up instanceof Error ? up.message
      : child.exitCode !== null ? `it exited with code ${child.exitCode}`
      : `no PING answer within ${START_TIMEOUT_MS} ms`;
    const details = [output.trim(), logSince(logFile, logStart)].filter(Boolean).join('\n');
    throw new StartupError(`redis-server did not start on ${HOST}:${port}: ${why}${details ? `\n${details}` : ''}`);
  }

  const pid = child.pid as number;
  const lastResort = (): void => void child.kill('SIGTERM'); // process 'exit': synchronous, cannot wait
  process.once('exit', lastResort);
  logger.log(`Started a local redis-server (${version.stdout.split(' ')[2] ?? 'unknown version'}): pid ${pid}, ${url}, data in ${dataDir}, log in ${logFile}`);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      process.removeListener('exit', lastResort);
      const exited = exitOf(child);
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // exited meanwhile
        }
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      logger.log(`Stopped the local redis-server (pid ${pid}); its data stays in ${dataDir}`);
    })());
  return { url, pid, stop };
}
