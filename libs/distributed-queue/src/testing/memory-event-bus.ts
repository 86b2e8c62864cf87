import { Injectable } from '@nestjs/common';
import { TaskEventBus } from '../events/task-event-bus';

/**
 * The event bus of the testing module: events reach their listeners in a microtask, right after the call
 * that ended the task, so that they are delivered before `runDue` / `advanceBy` resolve, and no timer (which
 * Jest's fake timers would hold) is left.
 */
@Injectable()
export class MemoryEventBus extends TaskEventBus {
  protected override schedule(flush: () => void): void {
    queueMicrotask(flush);
  }
}
