import { Injectable, Logger } from '@nestjs/common';
import { isInternalType } from '../distributed-queue.constants';
import type { TaskEvent, TaskEventListener, TaskEventName, TaskEventScope } from '../interfaces/task-event.interface';
import { toError } from '../runtime/handler-call';

type Listeners = Map<string, Map<TaskEventName, TaskEventListener[]>>;

/**
 * The type a listener of every type, the library's own included, registers under ('*' hears the user's types
 * only). Braces: no task type can be named so.
 */
export const ANY_TYPE_WITH_INTERNAL = '{*}';

/** Counts of submitted tasks, for metrics: (type, how many were created). */
export type SubmitListener = (type: string, created: number) => void;

/**
 * A handler run that no engine reports as events: a service-mode application's run of a delivered task (the
 * scheduler records its outcome). `startedAt` is epoch ms of this process's clock, `dueAt` the task's.
 */
export interface HandlerRun {
  type: string;
  ok: boolean;
  dueAt: number;
  startedAt: number;
  durationMs: number;
}

/** A listener of handler runs (metrics). */
export type HandlerRunListener = (run: HandlerRun) => void;

/**
 * Delivers lifecycle events to their listeners, off the engines' paths: `emit` queues the event and one
 * `setImmediate` delivers everything queued, each listener guarded (a throw or a rejection is logged; a
 * promise is never awaited, so a listener that hangs holds nothing up). `wants` lets an engine skip
 * building an event nobody listens to.
 */
@Injectable()
export class TaskEventBus {
  private readonly logger = new Logger('DistributedQueue');
  private readonly listeners: Record<TaskEventScope, Listeners> = { local: new Map(), fleet: new Map() };
  private readonly submitListeners: SubmitListener[] = [];
  private readonly runListeners: HandlerRunListener[] = [];
  private pending: TaskEvent[] = [];
  private flushQueued = false;

  /**
   * Adds a listener of `names` for `type` ('*': every type but the library's own, `ANY_TYPE_WITH_INTERNAL`:
   * every type). Returns a function that removes it.
   */
  on(scope: TaskEventScope, type: string, names: readonly TaskEventName[], listener: TaskEventListener): () => void {
    const byName = this.listeners[scope].get(type) ?? new Map<TaskEventName, TaskEventListener[]>();
    this.listeners[scope].set(type, byName);
    for (const name of names) byName.set(name, [...(byName.get(name) ?? []), listener]);
    return () => {
      for (const name of names) byName.set(name, (byName.get(name) ?? []).filter((l) => l !== listener));
    };
  }

  /** Whether anything listens to `name` events of `type` in `scope`. */
  wants(scope: TaskEventScope, type: string, name: TaskEventName): boolean {
    const map = this.listeners[scope];
    const listened = (key: string): boolean => (map.get(key)?.get(name)?.length ?? 0) > 0;
    return listened(type) || (!isInternalType(type) && listened('*')) || listened(ANY_TYPE_WITH_INTERNAL);
  }

  /** Types with fleet listeners of their own ('*' is returned as is: the caller knows every type). */
  fleetTypes(): string[] {
    return [...this.listeners.fleet.entries()]
      .filter(([t, byName]) => t !== ANY_TYPE_WITH_INTERNAL && [...byName.values()].some((l) => l.length > 0))
      .map(([t]) => t);
  }

  /** Queues an event for its listeners (delivered on the next turn of the event loop). */
  emit(event: TaskEvent): void {
    if (!this.wants(event.scope, event.task.type, event.event)) return;
    this.pending.push(event);
    if (this.flushQueued) return;
    this.flushQueued = true;
    this.schedule(() => this.flush());
  }

  /** When queued events are delivered: the next turn of the event loop (the testing module: at once after the current call). */
  protected schedule(flush: () => void): void {
    setImmediate(flush);
  }

  /** Adds a listener of submits (`created` tasks of `type`). */
  onSubmitted(listener: SubmitListener): void {
    this.submitListeners.push(listener);
  }

  /** Reports created tasks to the submit listeners (synchronously: they only count). */
  submitted(type: string, created: number): void {
    for (const listener of this.submitListeners) listener(type, created);
  }

  /** Adds a listener of handler runs reported with `handlerRan`. Returns a function that removes it. */
  onHandlerRun(listener: HandlerRunListener): () => void {
    this.runListeners.push(listener);
    return () => {
      const at = this.runListeners.indexOf(listener);
      if (at >= 0) this.runListeners.splice(at, 1);
    };
  }

  /** Reports a handler run to its listeners (synchronously: they only count; a throw is logged). */
  handlerRan(run: HandlerRun): void {
    for (const listener of this.runListeners) {
      try {
        listener(run);
      } catch (error) {
        this.logger.error(`A listener of ${run.type} handler runs failed: ${toError(error).message}`);
      }
    }
  }

  private flush(): void {
    this.flushQueued = false;
    const events = this.pending;
    this.pending = [];
    for (const event of events) {
      const map = this.listeners[event.scope];
      const own = map.get(event.task.type)?.get(event.event);
      if (own) for (const listener of own) this.deliver(listener, event);
      // NOTE: the library's own types (`__route__.*`, `__cron__*`) only for listeners that ask for them.
      const any = isInternalType(event.task.type) ? undefined : map.get('*')?.get(event.event);
      if (any) for (const listener of any) this.deliver(listener, event);
      const every = map.get(ANY_TYPE_WITH_INTERNAL)?.get(event.event);
      if (every) for (const listener of every) this.deliver(listener, event);
    }
  }

  private deliver(listener: TaskEventListener, event: TaskEvent): void {
    try {
      const outcome = listener(event);
      if (outcome && typeof (outcome as PromiseLike<unknown>).then === 'function') {
        (outcome as PromiseLike<unknown>).then(undefined, (error: unknown) => this.reportFailure(event, error));
      }
    } catch (error) {
      this.reportFailure(event, error);
    }
  }

  /** Logs a listener's throw or rejection. (Its own method: no closure per delivery on the success path.) */
  private reportFailure(event: TaskEvent, error: unknown): void {
    this.logger.error(`@OnTaskEvent listener of ${event.task.type} ${event.event} failed: ${toError(error).message}`);
  }
}
