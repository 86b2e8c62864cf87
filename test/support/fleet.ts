import { Injectable } from '@nestjs/common';
import { OnTaskEvent, type TaskEvent } from 'nestjs-distributed-queue';
import { spawnChild, type ChildHandle } from './child';
import type { RedisTarget } from './targets';

/** Records the fleet events of `type` heard in this process. */
export function fleetRecorder(type: string) {
  const seen: TaskEvent[] = [];
  @Injectable()
  class Recorder {
    @OnTaskEvent(type, '*', { scope: 'fleet' })
    on(event: TaskEvent): void {
      seen.push(event);
    }
  }
  return { Recorder, seen };
}

/** A child application following `type`'s fleet events (and running it with `work`): test/fixtures/fleet-app.ts. */
export function fleetApp(target: RedisTarget, prefix: string, type: string, env: Record<string, string> = {}): ChildHandle {
  return spawnChild('test/fixtures/fleet-app.ts', { DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: type, ...env });
}
