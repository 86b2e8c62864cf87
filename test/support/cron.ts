import { Injectable } from '@nestjs/common';
import { DistributedCron, type CronRun } from 'nestjs-distributed-queue';
import { spawnChild, type ChildHandle } from './child';
import type { RedisTarget } from './targets';

/** A run of the @DistributedCron method of test/fixtures/cron-app.ts as an instance reported it. */
export interface Run {
  type: 'start' | 'end';
  instance: string;
  schedule: string;
  tickAt: number;
  attempt: number;
  at: number;
}

export async function startInstance(target: RedisTarget, prefix: string, instance: string, env: Record<string, string> = {}): Promise<ChildHandle> {
  const child = spawnChild('test/fixtures/cron-app.ts', { DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_INSTANCE: instance, ...env });
  // NOTE: a wide bound: a child loads the library (compiled, or from the cache of ts-cache-register.js), over
  // 30 s when the machine is loaded and the cache cold.
  await child.waitForMessage((m) => m.type === 'ready', 90_000).catch((error: Error) => {
    throw new Error(`${error.message}\n${child.output()}`);
  });
  return child;
}

export const reported = (children: ChildHandle[], kind: Run['type']): Run[] =>
  children.flatMap((c) => c.messages.filter((m: Run) => m.type === kind)).sort((a, b) => a.at - b.at);

/** An in-process provider whose `@DistributedCron` method (every second, schedule `name`) records its runs. */
export function recordingCron(name: string): { Sweeper: new () => unknown; runs: CronRun[] } {
  const runs: CronRun[] = [];
  @Injectable()
  class Sweeper {
    @DistributedCron('* * * * * *', { name })
    sweep(run: CronRun): void {
      runs.push(run);
    }
  }
  return { Sweeper, runs };
}
