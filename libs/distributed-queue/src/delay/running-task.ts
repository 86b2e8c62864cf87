import { CorruptTaskError } from '../errors';
import type { ActiveTask, TaskHandler } from '../interfaces';
import type { ActiveTaskClass } from '../runtime/active-task';
import { callHandler } from '../runtime/handler-call';
import { splitTraceContext } from '../tracing/trace-carrier';
import type { ConsumerFlows } from './consumer-flows';
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
  view?: ActiveTask;
  /** Its progress was written to Redis: its attempt's end clears it (see `TaskReports`). */
  reported?: boolean;
  /** Lines it logged so far (each line's number in its run, this reservation: see scripts/includes/task-logs.lua). */
  logged?: number;
  /** Its last reports were sent as it ended: resolves once Redis answered (see `TaskReports.ended`). */
  reportsSent?: Promise<unknown>;
  /** The last report call that carried its reports. */
  reportsCall?: Promise<boolean>;
  /** When its handler started (epoch ms). */
  startedAt: number;
}

/** The id and token of a running task's reservation. */
export const heldOf = (t: RunningTask): [string, string] => [t.reservation.id, t.reservation.token];

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

/**
 * Starts a reserved task's handler: reads its payload and builds the task it gets (`task.view`; a flow
 * node's `task.flow` read first). `done` gets the handler's outcome; `fail` a failure before it started
 * (a corrupt payload, its flow unreadable).
 */
export function startRun(
  type: string, handler: TaskHandler, task: RunningTask, flows: ConsumerFlows | undefined, View: ActiveTaskClass,
  done: (error: Error | null, result?: unknown) => void, fail: (error: Error) => void,
): void {
  const stored = task.reservation.payload;
  const { json, traceContext } = splitTraceContext(stored);
  let payload: unknown;
  try {
    payload = JSON.parse(json);
  } catch (error) {
    fail(new CorruptTaskError(`payload is not valid JSON: ${(error as Error).message}`));
    return;
  }
  const { id, attempt, dueAt } = task.reservation;
  const view = new View(id, type, payload, attempt, dueAt, traceContext);
  task.view = view;
  if (flows?.is(id)) {
    // NOTE: a node stored with a leading `&` has dependencies whose results it reads first; a root has none.
    if (stored.charCodeAt(0) !== 38) {
      view.flow = flows.rootContext(id);
      callHandler(handler, view, task.controller, done);
    } else {
      flows.withContext(id, (flow) => !task.settled && callHandler(handler, Object.assign(view, { flow }), task.controller, done), fail);
    }
  } else {
    callHandler(handler, view, task.controller, done);
  }
}
