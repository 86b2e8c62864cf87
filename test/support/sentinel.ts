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

/** Settings of a group of sentinels (`startSentinels`). */
export interface SentinelGroupOptions {
  /** Sentinels that must agree the master is down. @default 2 */
  quorum?: number;
  /** sentinel down-after-milliseconds. @default 1000 */
  downAfterMs?: number;
  /** sentinel failover-timeout: also half the least time between two failovers of the master. @default 3000 */
  failoverTimeoutMs?: number;
}

/**
 * Starts `count` redis-sentinel processes on free ports, monitoring `mymaster` at 127.0.0.1:`masterPort`,
 * and waits until each knows the others and `replicas` replicas.
 */
export async function startSentinels(count: number, masterPort: number, options: SentinelGroupOptions = {}, replicas = 0): Promise<SentinelHandle[]> {
  const handles: SentinelHandle[] = [];
  try {
    for (let n = 0; n < count; n++) {
      const port = await getFreePort();
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dq-sentinel-'));
      const conf = path.join(dir, 'sentinel.conf');
      await fs.writeFile(conf, [
        `port ${port}`, 'bind 127.0.0.1', `dir ${dir}`,
        `sentinel monitor mymaster 127.0.0.1 ${masterPort} ${options.quorum ?? 2}`,
        `sentinel down-after-milliseconds mymaster ${options.downAfterMs ?? 1000}`,
        `sentinel failover-timeout mymaster ${options.failoverTimeoutMs ?? 3000}`,
      ].join('\n') + '\n');
      const [cmd, args] = withParentDeathSignal('redis-server', [conf, '--sentinel']);
      const proc: ChildProcess = spawn(cmd, args, { stdio: 'ignore' });
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      handles.push({
        port,
        stop: async () => {
          if (proc.exitCode === null && proc.pid) process.kill(proc.pid, 'SIGKILL');
          await exited;
          await fs.rm(dir, { recursive: true, force: true });
        },
      });
      for (let i = 0; (await redisCommand(port, ['PING']).catch(() => null)) !== 'PONG'; i++) {
        if (i === 100 || proc.exitCode !== null) throw new Error(`sentinel on ${port} did not come up`);
        await sleep(50);
      }
    }
    // NOTE: they find each other through the master's hello channel (every 2 s).
    for (let i = 0; ; i++) {
      const known = await Promise.all(handles.map(async ({ port }) => {
        const others = await redisCommand(port, ['SENTINEL', 'CKQUORUM', 'mymaster']).catch((e: Error) => e.message);
        const info = (await redisCommand(port, ['INFO', 'sentinel']).catch(() => '')) ?? '';
        return /OK/.test(others ?? '') && new RegExp(`slaves=${replicas},sentinels=${count}\\b`).test(info);
      }));
      if (known.every(Boolean)) break;
      if (i === 150) throw new Error(`sentinels ${handles.map((h) => h.port).join(', ')} did not find each other and ${replicas} replicas within 15 s`);
      await sleep(100);
    }
    return handles;
  } catch (error) {
    await Promise.all(handles.map((h) => h.stop()));
    throw error;
  }
}
