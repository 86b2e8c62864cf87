import type { LoggerService } from '@nestjs/common';
import { reportFailure } from '../redis/outage-log';
import { logLineText, progressText } from '../runtime/report-text';
import { activeTaskClass, CHECKING_SINK, type ActiveTaskClass } from '../runtime/active-task';
import type { ConsumerEvents } from './consumer-events';
import type { LogBounds, ReportEntry, ReportsStore } from './reports.store';
import type { RunningTask } from './running-task';

/** At most one report call per consumer in this period, unless an attempt ends (its last reports go at once). */
export const REPORT_EVERY_MS = 200;

/** What one running task reported since the last call. */
interface Pending {
  task: RunningTask;
  /** Its last progress (JSON) since the last call. */
  progress?: string;
  lines: string[];
  final: boolean;
}

/** The bounds of what tasks report. */
export interface ReportBounds extends LogBounds {
  maxProgressBytes: number;
}

/**
 * What the running tasks of one delay-queue consumer report (`task.progress`, `task.log`), coalesced: one
 * call to Redis per REPORT_EVERY_MS at most, carrying each task's last progress and its new lines. An attempt
 * that ends sends its last reports before the call that ends it (its ack or failure, sent after on the same
 * connection), so that they are kept with it and its progress is cleared.
 * NOTE: reports still buffered when the process dies are lost (at most REPORT_EVERY_MS of them).
 */
export class TaskReports {
  private readonly pending = new Map<RunningTask, Pending>();
  private timer?: NodeJS.Timeout;
  private lastCallAt = 0;
  /** The last call sent (resolved once Redis answered it). */
  private last: Promise<void> = Promise.resolve();
  /** A flush queued for the end of this tick's synchronous work. */
  private soon?: Promise<void>;

  constructor(
    private readonly type: string,
    private readonly store: ReportsStore,
    private readonly bounds: ReportBounds,
    private readonly events: ConsumerEvents,
    private readonly logger: LoggerService,
  ) {}

  /**
   * The class of the tasks this consumer's handlers get: their `progress` and `log` come here while their
   * attempt runs (`running` finds it by id); a call after it ended, or from an earlier attempt's task, is
   * checked and dropped.
   */
  viewClass(running: (id: string) => RunningTask | undefined): ActiveTaskClass {
    return activeTaskClass({
      progress: (view, value) => {
        const task = running(view.id);
        if (task?.view === view) this.progress(task, value);
        else CHECKING_SINK.progress(view, value);
      },
      log: (view, line) => {
        const task = running(view.id);
        if (task?.view === view) this.log(task, line);
        else CHECKING_SINK.log(view, line);
      },
    });
  }

  /** `task.progress(value)`: kept as the attempt's last progress. @throws InvalidArgumentError (not JSON, too large) */
  progress(task: RunningTask, value: unknown): void {
    const text = progressText(value, this.bounds.maxProgressBytes);
    if (task.settled) return;
    this.entry(task).progress = text;
    task.reported = true;
    this.events.progress(task, value);
    this.schedule();
  }

  /** `task.log(line)`: one more line of the task's log. @throws InvalidArgumentError (not a string) */
  log(task: RunningTask, line: unknown): void {
    const text = logLineText(task.reservation.attempt, line);
    if (task.settled) return;
    const { lines } = this.entry(task);
    lines.push(text);
    // NOTE: Redis keeps the last maxLines: more never need to wait here (Redis away for long)
    if (lines.length > this.bounds.maxLines) lines.shift();
    this.schedule();
  }

  /**
   * The task's attempt ended: its last reports go, and its progress is cleared, before the call that ends it:
   * at once (`now`: a failure's call follows in this tick), else in a microtask (acks go in a later one).
   * Resolves once Redis has them (undefined: the task reported nothing).
   */
  ended(task: RunningTask, now: boolean): Promise<void> | undefined {
    if (this.pending.size === 0 && !task.reported) return undefined;
    const pending = this.pending.get(task);
    if (!pending && !task.reported) return undefined;
    (pending ?? this.entry(task)).final = true;
    if (now) return this.flush();
    return (this.soon ??= Promise.resolve().then(() => {
      this.soon = undefined;
      return this.flush();
    }));
  }

  /**
   * Sends every buffered report in one call; failures are logged and the reports kept for the next call.
   * Resolves once Redis answered it (nothing buffered: the last call sent).
   */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return this.last;
    const batch = [...this.pending.values()];
    this.pending.clear();
    this.lastCallAt = Date.now();
    const entries = batch.map(({ task, progress, lines, final }): ReportEntry => ({ id: task.reservation.id, token: task.reservation.token, progress: progress ?? '', lines: lines.join('\n'), final }));
    return (this.last = this.store.write(this.type, entries, this.bounds).then(
      () => undefined,
      (error: Error) => {
        reportFailure(this.logger, `[${this.type}] progress and logs`, error);
        this.restore(batch);
      },
    ));
  }

  /** A failed call's reports go back, ahead of those made since (whose progress is newer). */
  private restore(batch: Pending[]): void {
    for (const old of batch) {
      const now = this.pending.get(old.task);
      if (now) {
        now.lines = [...old.lines, ...now.lines].slice(-this.bounds.maxLines);
        now.progress ??= old.progress;
        now.final ||= old.final;
      } else {
        this.pending.set(old.task, old);
      }
    }
    this.schedule();
  }

  private entry(task: RunningTask): Pending {
    let pending = this.pending.get(task);
    if (!pending) this.pending.set(task, (pending = { task, lines: [], final: false }));
    return pending;
  }

  private schedule(): void {
    if (this.timer) return;
    const wait = Math.max(0, this.lastCallAt + REPORT_EVERY_MS - Date.now());
    this.timer = setTimeout(() => void this.flush(), wait);
  }
}
