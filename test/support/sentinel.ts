import { spawn, type ChildProcess } from 'child_process';
import { promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';
import { withParentDeathSignal } from './child';
import { getFreePort, redisCommand } from './redis-server';
import { sleep } from './wait';

/** A redis-sentinel process watching one master under the name `mymaster`. */
export interface SentinelHandle {
  port: number;
  stop(): Promise<void>;
}

/** Starts `redis-server <conf> --sentinel` on a free port, monitoring 127.0.0.1:`masterPort`. */
export async function startSentinel(masterPort: number): Promise<SentinelHandle> {
  const port = await getFreePort();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dq-sentinel-'));
  const conf = path.join(dir, 'sentinel.conf');
  await fs.writeFile(conf, [
    `port ${port}`, 'bind 127.0.0.1', `dir ${dir}`,
    `sentinel monitor mymaster 127.0.0.1 ${masterPort} 1`,
    'sentinel down-after-milliseconds mymaster 2000',
  ].join('\n') + '\n');
  const [cmd, args] = withParentDeathSignal('redis-server', [conf, '--sentinel']);
  const proc: ChildProcess = spawn(cmd, args, { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  for (let i = 0; i < 100; i++) {
    const reply = await redisCommand(port, ['PING']).catch(() => null);
    if (reply === 'PONG') break;
    if (i === 99 || proc.exitCode !== null) {
      if (proc.pid && proc.exitCode === null) process.kill(proc.pid, 'SIGKILL');
      throw new Error(`sentinel on ${port} did not come up`);
    }
    await sleep(50);
  }
  return {
    port,
    stop: async () => {
      if (proc.exitCode === null && proc.pid) process.kill(proc.pid, 'SIGKILL');
      await exited;
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
