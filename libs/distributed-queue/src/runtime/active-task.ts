import type { ActiveTask, TaskFlow } from '../interfaces';
import { DEFAULT_MAX_PROGRESS_BYTES, logLineText, progressText } from './report-text';

/** Where a task's `progress` and `log` calls go. */
export interface ReportSink {
  progress(task: ActiveTask, value: unknown): void;
  log(task: ActiveTask, line: string): void;
}

/** The constructor of the tasks one engine's handlers get. */
export type ActiveTaskClass = new (id: string, type: string, payload: unknown, attempt: number, dueAt: number, traceContext?: string) => ActiveTask & { flow?: TaskFlow };

/**
 * The class of the tasks handlers get, whose `progress` and `log` go to `sink`: a class (methods on its
 * prototype), so that a task costs what a plain object does and compares equal to one (`toEqual`).
 */
export function activeTaskClass(sink: ReportSink): ActiveTaskClass {
  return class implements ActiveTask {
    readonly traceContext?: string;
    flow?: TaskFlow;

    constructor(
      readonly id: string,
      readonly type: string,
      readonly payload: unknown,
      readonly attempt: number,
      readonly dueAt: number,
      traceContext?: string,
    ) {
      if (traceContext) this.traceContext = traceContext;
    }

    progress(value: unknown): void {
      sink.progress(this, value);
    }

    log(line: string): void {
      sink.log(this, line);
    }
  };
}

/** A sink that keeps nothing: it checks what it is given (the same typed errors) and drops it. */
export const CHECKING_SINK: ReportSink = {
  progress: (_task, value) => void progressText(value, DEFAULT_MAX_PROGRESS_BYTES),
  log: (task, line) => void logLineText(task.attempt, line),
};

/** Tasks whose reports are not kept (service mode's remote runs): checked, then dropped. */
export const UnkeptTask = activeTaskClass(CHECKING_SINK);

/** An ordered task as its handler gets it: its reports are checked, then dropped (not kept for ordered tasks). */
export class OrderedTask extends UnkeptTask {
  constructor(
    id: string,
    type: string,
    readonly key: string,
    payload: unknown,
    attempt: number,
    dueAt: number,
    readonly fence: { partition: number; epoch: number },
    traceContext?: string,
  ) {
    super(id, type, payload, attempt, dueAt, traceContext);
  }
}
