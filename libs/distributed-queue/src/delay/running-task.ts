import type { Task } from '../interfaces';
import { setLongTimeout, type LongTimer } from '../runtime/long-timer';
import type { Reservation } from './delay-queue.store';

/** A reserved task whose handler runs (or ran) in this process. */
export interface RunningTask {
  reservation: Reservation;
  /** Absent when the handler cannot see its signal (`takesSignal`). */
  controller?: AbortController;
  batch: Batch;
  settled: boolean;
  /** The task as its handler got it (undefined when its payload could not be read). */
  view?: Task;
  /** When its handler started (epoch ms). */
  startedAt: number;
}

/** Tasks started together: one timeout timer serves them all. */
export interface Batch {
  tasks: Set<RunningTask>;
  timer?: LongTimer;
}

/** A batch whose tasks still in it after `timeoutMs` are each passed to `onTimeout` (no timer for 0 tasks). */
export function newBatch(timeoutMs: number, onTimeout: (task: RunningTask) => void): Batch {
  const batch: Batch = { tasks: new Set() };
  batch.timer = setLongTimeout(() => {
    for (const task of [...batch.tasks]) onTimeout(task);
  }, timeoutMs);
  return batch;
}
