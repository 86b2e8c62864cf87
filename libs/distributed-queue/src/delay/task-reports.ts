import type { LoggerService } from '@nestjs/common';
import { reportFailure } from '../redis/outage-log';
import { logLineText, progressText } from '../runtime/report-text';
import { activeTaskClass, CHECKING_SINK, type ActiveTaskClass } from '../runtime/active-task';
import type { ConsumerEvents } from './consumer-events';
import type { LogBounds, ReportEntry, ReportsStore } from './reports.store';
import type { RunningTask } from './running-task';

/** At most one report call per consumer in this period, unless an attempt ends (its last reports go at once). */
export const REPORT_EVERY_MS = 200;
/**
 * The log bytes one call may copy in Redis: each task whose lines it writes costs a copy of its log (see
 * task-logs.lua; measured: 8 logs of 64 KiB in 2.1 ms), so a call writes the lines of at most this many bytes'
 * worth of `taskLogs.maxBytes` logs, and of one task at least.
 */
export const LOG_BYTES_PER_CALL = 512 * 1024;

/** What one running task reported since the last call. */
interface Pending {
  task: RunningTask;
  /** Its last progress (JSON) since the last call. */
  progress?: string;
  lines: string[];
  /** The number of `lines[0]` in its run (see `RunningTask.logged`). */
  firstSeq: number;
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
  /** The call in flight: one at a time, so that each call's lines follow the last one's (see `restore`). */
  private inFlight?: Promise<boolean>;
  /** The flush that follows the call in flight. */
  private next?: Promise<boolean>;
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
    this.events.progress(task, value);
    this.schedule();
  }

  /** `task.log(line)`: one more line of the task's log. @throws InvalidArgumentError (not a string) */
  log(task: RunningTask, line: unknown): void {
    const text = logLineText(task.reservation.attempt, line);
    if (task.settled) return;
    const pending = this.entry(task);
    task.logged = (task.logged ?? 0) + 1;
    if (pending.lines.length === 0) pending.firstSeq = task.logged;
    pending.lines.push(text);
    // NOTE: Redis keeps the last maxLines: more never need to wait here (Redis away for long); the gap in the
    // numbers tells Redis how many were dropped
    if (pending.lines.length > this.bounds.maxLines) {
      pending.lines.shift();
      pending.firstSeq++;
    }
    this.schedule();
  }

  /**
   * The task's attempt ended: its last reports go, and its progress is cleared: at once (`now`), else in a
   * microtask (with the others ending in this tick). Resolves once Redis answered (undefined: the task reported
   * nothing); the call that ends the attempt (its ack or failure) waits for that.
   */
  ended(task: RunningTask, now: boolean): Promise<unknown> | undefined {
    if (this.pending.size === 0 && !task.reported) return undefined;
    const pending = this.pending.get(task);
    if (!task.reported && (!pending || pending.lines.length === 0)) {
      // NOTE: progress never written (a quick task): nothing to write, nothing to clear; no call, no wait
      if (pending) this.pending.delete(task);
      return undefined;
    }
    (pending ?? this.entry(task)).final = true;
    if (now) return this.sendOut(task);
    return (this.soon ??= Promise.resolve().then(() => {
      this.soon = undefined;
    })).then(() => this.sendOut(task));
  }

  /** Flushes until the task's reports went (or a call failed); resolves once the call that carried them was answered. */
  private async sendOut(task: RunningTask): Promise<unknown> {
    while (this.pending.has(task)) {
      if (!(await this.flush())) return undefined;
    }
    return task.reportsCall;
  }

  /**
   * Sends every buffered report in one call (after the call in flight, if any); failures are logged and the
   * reports kept for the next call. Resolves once Redis answered the call that carried them: true, or false
   * when it failed. Reports left for the next call (see `take`) go at once after.
   */
  flush(): Promise<boolean> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.inFlight) {
      return (this.next ??= this.inFlight.then(() => {
        this.next = undefined;
        return this.flush();
      }));
    }
    if (this.pending.size === 0) return Promise.resolve(true);
    const batch = this.take();
    this.lastCallAt = Date.now();
    const entries = batch.map(({ task, progress, lines, firstSeq, final }): ReportEntry => {
      if (progress !== undefined && !final) task.reported = true;
      return { id: task.reservation.id, token: task.reservation.token, progress: progress ?? '', lines: lines.join('\n'), firstSeq, final };
    });
    const call = this.store.write(this.type, entries, this.bounds).then(
      () => true,
      (error: Error) => {
        reportFailure(this.logger, `[${this.type}] progress and logs`, error);
        this.restore(batch);
        return false;
      },
    );
    const inFlight = (this.inFlight = call.finally(() => {
      this.inFlight = undefined;
    }));
    for (const { task } of batch) task.reportsCall = inFlight;
    if (this.pending.size > 0) void this.flush();
    return inFlight;
  }

  /**
   * A failed call's reports go back, ahead of those made since (whose progress is newer): the lines stay in
   * order, numbered without a gap (one call at a time). NOTE: the call may have run all the same (a timeout):
   * Redis skips the lines it has by their numbers.
   */
  private restore(batch: Pending[]): void {
    for (const old of batch) {
      const now = this.pending.get(old.task);
      if (now) {
        const lines = old.lines.length > 0 ? [...old.lines, ...now.lines] : now.lines;
        const cut = Math.max(0, lines.length - this.bounds.maxLines);
        now.firstSeq = (old.lines.length > 0 ? old.firstSeq : now.firstSeq) + cut;
        now.lines = cut > 0 ? lines.slice(cut) : lines;
        now.progress ??= old.progress;
        now.final ||= old.final;
      } else {
        this.pending.set(old.task, old);
      }
    }
    this.schedule();
  }

  /**
   * The reports of one call: the tasks that logged no line, and as many that did as LOG_BYTES_PER_CALL allows
   * (the bound keeps a call short); the others go with the next call, sent as soon as this one is answered.
   */
  private take(): Pending[] {
    const batch: Pending[] = [];
    const most = Math.max(1, Math.floor(LOG_BYTES_PER_CALL / this.bounds.maxBytes));
    let logging = 0;
    for (const [task, pending] of this.pending) {
      if (pending.lines.length > 0 && ++logging > most) continue;
      batch.push(pending);
      this.pending.delete(task);
    }
    return batch;
  }

  private entry(task: RunningTask): Pending {
    let pending = this.pending.get(task);
    if (!pending) this.pending.set(task, (pending = { task, lines: [], firstSeq: 1, final: false }));
    return pending;
  }

  private schedule(): void {
    if (this.timer) return;
    const wait = Math.max(0, this.lastCallAt + REPORT_EVERY_MS - Date.now());
    this.timer = setTimeout(() => void this.flush(), wait);
  }
}
