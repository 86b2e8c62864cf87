import { Injectable } from '@nestjs/common';
import type { TaskContract } from '../contracts/task-contract';
import type { TaskActivity, TaskEventName } from '../interfaces';
import { TaskInspectorService } from '../services/task-inspector.service';
import { checkTypeNames, checkWindowMs } from '../services/task-input';
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
    const names = checkTypeNames(types);
    checkWindowMs(windowMs);
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
