import { Injectable, Logger } from '@nestjs/common';
import type { TaskEvent, TaskEventListener, TaskEventName, TaskEventScope } from '../interfaces/task-event.interface';
import { toError } from '../runtime/handler-call';

type Listeners = Map<string, Map<TaskEventName, TaskEventListener[]>>;

/** Counts of submitted tasks, for metrics: (type, how many were created). */
export type SubmitListener = (type: string, created: number) => void;

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
  private pending: TaskEvent[] = [];
  private flushQueued = false;

  /** Adds a listener of `names` for `type` ('*': every type). Returns a function that removes it. */
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
    return (map.get(type)?.get(name)?.length ?? 0) > 0 || (map.get('*')?.get(name)?.length ?? 0) > 0;
  }

  /** Types with fleet listeners of their own ('*' is returned as is: the caller knows every type). */
  fleetTypes(): string[] {
    return [...this.listeners.fleet.entries()].filter(([, byName]) => [...byName.values()].some((l) => l.length > 0)).map(([t]) => t);
  }

  /** Queues an event for its listeners (delivered on the next turn of the event loop). */
  emit(event: TaskEvent): void {
    if (!this.wants(event.scope, event.task.type, event.event)) return;
    this.pending.push(event);
    if (this.flushQueued) return;
    this.flushQueued = true;
    setImmediate(() => this.flush());
  }

  /** Adds a listener of submits (`created` tasks of `type`). */
  onSubmitted(listener: SubmitListener): void {
    this.submitListeners.push(listener);
  }

  /** Reports created tasks to the submit listeners (synchronously: they only count). */
  submitted(type: string, created: number): void {
    for (const listener of this.submitListeners) listener(type, created);
  }

  private flush(): void {
    this.flushQueued = false;
    const events = this.pending;
    this.pending = [];
    for (const event of events) {
      const map = this.listeners[event.scope];
      const own = map.get(event.task.type)?.get(event.event);
      if (own) for (const listener of own) this.deliver(listener, event);
      const any = map.get('*')?.get(event.event);
      if (any) for (const listener of any) this.deliver(listener, event);
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
