import { CRON_TICK_TYPE } from '../distributed-queue.constants';
import { FlowProgress } from '../flow/flow-progress';
import type { DiscoveredWorker } from '../distributed-queue.explorer';
import { isUnrecoverable, RateLimitedError, ShutdownError, TaskCancelledError, TaskTimeoutError } from '../errors';
import type { TaskEventBus } from '../events/task-event-bus';
import type { ActiveTask, TaskErrorInfo, TaskEventName } from '../interfaces';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { activeTaskClass, type ActiveTaskClass } from '../runtime/active-task';
import { backoffDelay } from '../runtime/backoff';
import { keptError, stackOf } from '../runtime/error-stack';
import { callHandler, runController } from '../runtime/handler-call';
import { logLineText, progressText } from '../runtime/report-text';
import { resultText } from '../runtime/result-text';
import { splitTraceContext } from '../tracing/trace-carrier';
import { parsed, type MemoryEngine } from './memory-engine';
import type { MemoryLimits } from './memory-limits';
import type { MemoryGroups } from './memory-groups';
import type { MemoryOrderedRunner } from './memory-ordered-runner';
import type { MemoryTask, MemoryType } from './memory-type';

/** A dead node's error as its flow keeps it (see ConsumerFlows.dead): no stack. */
const flowError = ({ name, message, attempts, failedAt }: TaskErrorInfo): TaskErrorInfo => ({ name, message, attempts, failedAt });

/** Microtask rounds `runDue` lets pass before it looks for work (a submit chain is some 20 deep). */
const MICROTASK_ROUNDS = 100;

async function settleMicrotasks(): Promise<void> {
  for (let i = 0; i < MICROTASK_ROUNDS; i++) await null;
}

/** The library's own tasks that are not runs of the application's code: schedules' ticks, delayed ordered tasks' moves. */
const isPlumbing = (type: string): boolean => type === CRON_TICK_TYPE || type.startsWith('__route__.');

/** One attempt the runner started and has not settled. */
interface Attempt {
  task: MemoryTask;
  view: ActiveTask;
  startedAt: number;
  done: Promise<void>;
}

/**
 * Runs the in-memory engine's due delay-queue tasks through their workers as a consumer does: at most
 * `concurrency` of a type at once, by priority, due time and submission; each attempt through the same
 * handler call (its timeout, its abort signal), its failure retried after the type's backoff or buried
 * after `maxAttempts`, its events emitted once its end is recorded. It runs only when asked (`runDue`).
 */
export class MemoryRunner {
  private readonly attempts = new Set<Attempt>();
  private readonly TaskClass: ActiveTaskClass;
  private wake?: () => void;
  private closed = false;
  /** The clock when `startDue` last looked for work: what fell due after it, it has not seen. */
  private lookedAt = -Infinity;

  /** The route queue's runner, when the module has `route`. */
  ordered?: MemoryOrderedRunner;
  /** Flows' progress: a node's context before it runs, its completion and death recorded. */
  flows?: FlowProgress;

  constructor(
    private readonly engine: MemoryEngine,
    private readonly workers: () => DiscoveredWorker[],
    private readonly limits: MemoryLimits,
    private readonly groups: MemoryGroups,
    private readonly bus: TaskEventBus,
    private readonly options: Pick<ResolvedModuleOptions, 'maxResultBytes' | 'maxProgressBytes' | 'taskLogs'>,
  ) {
    this.TaskClass = activeTaskClass({ progress: (view, value) => this.progress(view, value), log: (view, line) => this.log(view, line) });
    engine.onChange(() => this.wake?.());
  }

  /** Attempts running now. */
  get active(): number {
    return this.attempts.size + (this.ordered?.attempts.size ?? 0);
  }

  /**
   * Runs every task due now (and those that fall due now while it runs: a handler's own submits), waiting for
   * each attempt to settle; resolves with the number of attempts started. Tasks due later stay.
   */
  async runDue(): Promise<number> {
    let started = 0;
    // NOTE: calls the test started without awaiting them (submitAndWait's submit follows its waiter's set-up)
    // land first: a few rounds of microtasks, no timer (Jest's fake timers may hold those)
    await settleMicrotasks();
    for (;;) {
      const now = this.startDue() + (this.ordered?.startDue() ?? 0);
      started += now;
      if (this.closed) return started;
      // NOTE: a synchronous handler ends within startDue: what it freed (or submitted) starts on the next turn
      if (this.active === 0) {
        if (now > 0) continue;
        // NOTE: work a call in flight adds (a submit landing) is looked for once more; nothing new, it ends
        const before = this.engine.changes;
        await settleMicrotasks();
        if (this.engine.changes !== before && this.dueNow()) continue;
        return started;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        void Promise.race([...[...this.attempts].map((a) => a.done), ...(this.ordered?.attempts.values() ?? [])]).then(resolve);
      });
      this.wake = undefined;
    }
  }

  /**
   * The next time after now at which something may start that cannot now: a waiting task falls due, a
   * rate limit or a `RateLimitedError` pause lets due tasks in, an ordered retry's backoff ends; null when
   * nothing waits for time (`withoutTicks`: leaving out the ticks of schedules, which never end).
   * `unseen`: from the time `startDue` last looked, rather than now. On a moving clock (auto mode) a run can
   * end after a task fell due that it never saw; that task's due time is then already past, and the caller
   * wakes at once instead of never.
   */
  nextDueAt(withoutTicks = false, unseen = false): number | null {
    const now = this.engine.clock.now();
    const after = unseen ? Math.min(now, this.lookedAt) : now;
    let next: number | null = null;
    const consider = (at: number | null): void => {
      if (at !== null && at > after && (next === null || at < next)) next = at;
    };
    for (const worker of this.delayWorkers()) {
      if (withoutTicks && worker.type === CRON_TICK_TYPE) continue;
      const queue = this.engine.type(worker.type);
      if (queue.paused) continue;
      let due = false;
      for (const task of queue.tasks.values()) {
        if (task.state !== 'waiting') continue;
        if (task.dueAt > after) consider(task.dueAt);
        else due = true;
      }
      if (!due) continue;
      consider(queue.pausedUntil);
      consider(this.limits.nextStartAt(worker));
      consider(this.groups.nextAllowedAt(worker, now));
    }
    consider(this.ordered?.nextDueAt() ?? null);
    return next;
  }

  /** Whether a task of a type with a worker here could start now (due, not held back). */
  private dueNow(): boolean {
    const now = this.engine.clock.now();
    return this.delayWorkers().some((w) => {
      const queue = this.engine.type(w.type);
      return !queue.paused && queue.pausedUntil <= now && queue.due(now).length > 0;
    }) || (this.ordered?.hasDue() ?? false);
  }

  /** Starts what may start now; returns how many attempts it started. */
  startDue(): number {
    if (this.closed) return 0;
    const now = this.engine.clock.now();
    this.lookedAt = now;
    let started = 0;
    for (const worker of this.delayWorkers()) {
      const queue = this.engine.type(worker.type);
      if (queue.paused || queue.pausedUntil > now) continue;
      const running = queue.running();
      const free = Math.min(worker.options.concurrency - running.length, this.limits.room(worker, queue));
      if (free <= 0) continue;
      const due: MemoryTask[] = [];
      for (const task of queue.due(now, this.engine.settings(worker.type).agingMs)) {
        if (task.expireAt !== undefined && task.expireAt <= now) {
          this.bury(queue, task, { name: 'TaskExpiredError', message: `not started by its deadline (${task.expireAt})`, attempts: 0, failedAt: now });
          if (this.flows && FlowProgress.isNode(task.type, task.id)) void this.flows.dead(task.id, flowError(task.error!)).catch(() => undefined);
        } else due.push(task);
      }
      const byGroup = new Map<string, number>();
      for (const task of running) byGroup.set(task.group ?? '', (byGroup.get(task.group ?? '') ?? 0) + 1);
      for (const task of this.groups.pick(worker, due, free, byGroup, now)) {
        if (!this.limits.take(worker, now)) break;
        this.start(worker, task);
        if (!isPlumbing(worker.type)) started++;
      }
    }
    return started;
  }

  private delayWorkers(): DiscoveredWorker[] {
    return this.workers().filter((w) => !w.options.ordered);
  }

  private start(worker: DiscoveredWorker, task: MemoryTask): void {
    const now = this.engine.clock.now();
    const attempt = task.attempts + 1;
    const controller = runController(worker.handler);
    const { json, traceContext } = splitTraceContext(task.payload);
    const view = new this.TaskClass(task.id, task.type, parsed(json), attempt, task.dueAt, traceContext);
    const entry = { task, view, startedAt: now } as Attempt;
    const node = this.flows && FlowProgress.isNode(task.type, task.id) && !task.type.startsWith('__cron__') ? this.flows : undefined;
    task.state = 'running';
    delete task.progress;
    entry.done = new Promise<void>((resolve) => {
      let settled = false;
      const end = (error: Error | null, result?: unknown): void => {
        this.attempts.delete(entry);
        const outcome = this.settle(worker, entry, error, result);
        // NOTE: a node's death is its flow's to learn (as the consumer tells it after the burial)
        if (node && outcome === 'dead') void node.dead(task.id, flowError(task.error!)).catch(() => undefined).finally(resolve);
        else resolve();
      };
      const finish = (error: Error | null, result?: unknown): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error && controller && !controller.signal.aborted) controller.abort(error);
        if (error || !node) return end(error, result);
        // NOTE: a node's completion is recorded (its dependents told) before its task is done, as before an ack
        let json: string;
        try {
          json = node.encodeResult(result);
        } catch (refused) {
          return end(refused as Error);
        }
        node.completed(task.id, json).then(() => end(null, result), (failure: Error) => end(failure));
      };
      task.run = { attempt, token: `${now}:${attempt}`, leaseExpiresAt: now + worker.options.visibilityTimeoutMs, cancelled: false, controller, stop: finish };
      const timer = setTimeout(() => finish(new TaskTimeoutError(worker.options.timeoutMs)), worker.options.timeoutMs);
      timer.unref?.();
      this.attempts.add(entry);
      if (!node) return callHandler(worker.handler, view, controller, finish);
      // NOTE: a node reads its dependencies' results first (task.flow)
      node.context(task.id).then((flow) => !settled && callHandler(worker.handler, Object.assign(view, { flow }), controller, finish), (error: Error) => finish(error));
    });
  }

  /** Records an attempt's end; returns what became of the task. */
  private settle(worker: DiscoveredWorker, { task, view, startedAt }: Attempt, error: Error | null, result: unknown): 'done' | 'rateLimited' | 'cancelled' | 'dead' | 'retried' | 'closed' {
    if (this.closed) return 'closed';
    const queue = this.engine.type(task.type);
    const now = this.engine.clock.now();
    const run = task.run!;
    const local = (event: TaskEventName, extra: { error?: Error; result?: unknown } = {}): void => {
      if (this.bus.wants('local', task.type, event)) this.bus.emit({ event, scope: 'local', task: view, ...extra, durationMs: now - startedAt, startedAt, at: now });
    };
    delete task.run;
    delete task.progress;
    if (!error) {
      task.attempts = run.attempt;
      task.result = resultText(result, this.options.maxResultBytes);
      task.doneAt = now;
      queue.release(task);
      queue.finish(task, this.engine.keepDone);
      local('completed', { result });
      this.engine.ended(task, 'completed', run.attempt, undefined, task.result === undefined ? undefined : parsed(task.result));
      this.engine.changed();
      return 'done';
    }
    if (error instanceof RateLimitedError) {
      task.state = 'waiting';
      // NOTE: a later pause never shortens an earlier one
      queue.pausedUntil = Math.max(queue.pausedUntil, now + error.retryAfterMs);
      local('rateLimited', { error });
      return 'rateLimited';
    }
    const stack = stackOf(error);
    const info: TaskErrorInfo = { ...keptError(error), attempts: run.attempt, failedAt: now, ...(stack ? { stack } : {}) };
    task.error = info;
    task.attempts = run.attempt;
    local('failed', { error });
    this.engine.fleet(task, 'failed', run.attempt, info);
    let outcome: 'cancelled' | 'dead' | 'retried';
    if (run.cancelled || error instanceof TaskCancelledError) {
      queue.remove(task);
      local('cancelled', { error });
      this.engine.ended(task, 'cancelled', run.attempt, info);
      outcome = 'cancelled';
    } else if (run.attempt >= worker.options.maxAttempts || isUnrecoverable(error)) {
      this.bury(queue, task, info);
      local('dead', { error });
      outcome = 'dead';
    } else {
      task.state = 'waiting';
      task.dueAt = now + backoffDelay(worker.options.backoff, run.attempt);
      local('retrying', { error });
      this.engine.fleet(task, 'retrying', run.attempt, info);
      outcome = 'retried';
    }
    this.engine.changed();
    return outcome;
  }

  /** Moves a task to dead letters with `error`. */
  private bury(queue: MemoryType, task: MemoryTask, error: TaskErrorInfo): void {
    task.state = 'dead';
    task.error = error;
    task.diedAt = this.engine.clock.now();
    queue.dead.add(task.id);
    queue.release(task);
    this.engine.ended(task, 'dead', task.attempts, error);
  }

  /** The running attempt `view` is of, or undefined once it ended (a late call keeps nothing). */
  private runningOf(view: ActiveTask): MemoryTask | undefined {
    const task = this.engine.type(view.type).tasks.get(view.id);
    return task?.run?.attempt === view.attempt ? task : undefined;
  }

  private progress(view: ActiveTask, value: unknown): void {
    const text = progressText(value, this.options.maxProgressBytes);
    const task = this.runningOf(view);
    if (!task) return;
    task.progress = text;
    const at = this.engine.clock.now();
    if (this.bus.wants('local', view.type, 'progress')) this.bus.emit({ event: 'progress', scope: 'local', task: view, progress: value, at });
    if (this.bus.wants('fleet', view.type, 'progress')) {
      this.bus.emit({ event: 'progress', scope: 'fleet', task: { id: view.id, type: view.type, payload: undefined, attempt: view.attempt, dueAt: view.dueAt }, progress: parsed(text), at });
    }
  }

  private log(view: ActiveTask, line: string): void {
    const text = logLineText(view.attempt, line, this.engine.clock.now());
    const task = this.runningOf(view);
    if (!task) return;
    const { maxLines, maxBytes } = this.options.taskLogs;
    task.logs.push(text);
    task.logBytes += Buffer.byteLength(text);
    // NOTE: as task-logs.lua counts: the lines joined by newlines; the oldest go first, never the newest
    const bytes = (): number => task.logBytes + task.logs.length - 1;
    while (task.logs.length > 1 && (task.logs.length > maxLines || bytes() > maxBytes)) {
      task.logBytes -= Buffer.byteLength(task.logs.shift()!);
      task.logsDropped++;
    }
  }

  /** Stops every running attempt as shutdown does: its signal aborts, it goes back to wait, no attempt spent. */
  stopAll(): void {
    this.closed = true;
    this.ordered?.stop();
    for (const { task } of this.attempts) {
      task.run?.controller?.abort(new ShutdownError());
      delete task.run;
      task.state = 'waiting';
    }
    this.attempts.clear();
    this.wake?.();
  }
}
