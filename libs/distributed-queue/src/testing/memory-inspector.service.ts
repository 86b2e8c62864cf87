import { Injectable } from '@nestjs/common';
import { checkedTypeOf, type TaskContract } from '../contracts/task-contract';
import { InvalidArgumentError } from '../errors';
import type { TaskActivity, TaskEventName } from '../interfaces';
import { TaskInspectorService } from '../services/task-inspector.service';
import { TestQueue } from './test-queue';

/**
 * `TaskInspectorService` of the testing module: every call is the real service's on the in-memory store,
 * but for `getActivity`, which counts the engine's own record of events (the real one reads Redis streams).
 */
@Injectable()
export class MemoryInspectorService extends TaskInspectorService {
  private queue?: TestQueue;

  /** @internal set by the module: the engine whose events are counted */
  useQueue(queue: TestQueue): void {
    this.queue = queue;
  }

  override async getActivityOf(types: readonly (string | TaskContract<unknown, boolean>)[], windowMs = 60_000): Promise<Map<string, TaskActivity>> {
    const names = types.map(checkedTypeOf);
    if (!Number.isInteger(windowMs) || windowMs < 1) throw new InvalidArgumentError('windowMs', `must be a positive integer, got ${String(windowMs)}`);
    const engine = this.queue!.engine;
    const from = engine.clock.now() - windowMs;
    const out = new Map<string, TaskActivity>(names.map((type) => [type, { windowMs, counts: {} }]));
    for (const { type, event, at } of engine.activity) {
      const counts = out.get(type)?.counts;
      if (counts && at > from) counts[event as TaskEventName] = (counts[event as TaskEventName] ?? 0) + 1;
    }
    return out;
  }
}
