import type { TaskEventBus } from '../events/task-event-bus';
import type { TaskEventName } from '../interfaces/task-event.interface';
import type { FailOutcome } from '../redis/script-outcome';
import type { RunningTask } from './running-task';

/** The event a recorded failure makes. */
const OUTCOME_EVENTS: Record<Exclude<FailOutcome, 'stale'>, TaskEventName> = { retried: 'retrying', dead: 'dead', dropped: 'cancelled' };

/** A task that succeeded, waiting for its ack to reach Redis before its `completed` event. */
export interface Completion {
  task: RunningTask;
  result: unknown;
  /** When its handler finished (epoch ms): the event's duration ends there. */
  finishedAt: number;
}

/**
 * Reports the lifecycle events of the tasks one delay-queue consumer runs (skipped when nobody listens),
 * each once Redis has the state change it announces: completions after the reply of the call that carried
 * their acks, failures after the reply of their fail script.
 */
export class ConsumerEvents {
  constructor(
    private readonly type: string,
    private readonly bus?: TaskEventBus,
  ) {}

  /** Whether anything in this process listens to `event` of this type. */
  wants(event: TaskEventName): boolean {
    return this.bus?.wants('local', this.type, event) ?? false;
  }

  /** Emits `event` now (`at`: default the clock); the handler's duration ends at `finishedAt` (default: `at`). */
  emit(task: RunningTask, event: TaskEventName, error?: Error, result?: unknown, finishedAt?: number, at = Date.now()): void {
    if (this.bus?.wants('local', this.type, event)) this.send(this.bus, task, event, error, result, finishedAt, at);
  }

  private send(bus: TaskEventBus, task: RunningTask, event: TaskEventName, error: Error | undefined, result: unknown, finishedAt: number | undefined, at: number): void {
    const { id, attempt, dueAt } = task.reservation;
    const view = task.view ?? { id, type: this.type, payload: undefined, attempt, dueAt };
    const durationMs = (finishedAt ?? at) - task.startedAt;
    bus.emit({ event, scope: 'local', task: view, error, result, durationMs, startedAt: task.startedAt, at });
  }

  /** `task.progress(value)` was called: a local `progress` event, at once. */
  progress(task: RunningTask, value: unknown): void {
    if (!this.bus?.wants('local', this.type, 'progress')) return;
    const { id, attempt, dueAt } = task.reservation;
    this.bus.emit({ event: 'progress', scope: 'local', task: task.view ?? { id, type: this.type, payload: undefined, attempt, dueAt }, progress: value, at: Date.now() });
  }

  /**
   * The completions whose acks Redis has: all but those it `refused` (their reservation had expired). They
   * were kept because something listened (the bus drops what nobody listens to any more).
   */
  completed(completions: Completion[], refused: string[]): void {
    const skip = refused.length > 0 ? new Set(refused) : undefined;
    const at = Date.now();
    for (const { task, result, finishedAt } of completions) {
      if (!skip?.has(task.reservation.id)) this.send(this.bus!, task, 'completed', undefined, result, finishedAt, at);
    }
  }

  /**
   * A failed attempt, once the fail script answered (`outcome`) or could not be sent (undefined): `failed`
   * (every failed attempt counts), then the event of the outcome Redis recorded (none when the reservation
   * was stale, Redis having taken the task back, nor when the call failed: the lease expires).
   */
  outcome(task: RunningTask, outcome: FailOutcome | undefined, error: Error, finishedAt: number): void {
    this.emit(task, 'failed', error, undefined, finishedAt);
    if (outcome !== undefined && outcome !== 'stale') this.emit(task, OUTCOME_EVENTS[outcome], error, undefined, finishedAt);
  }
}
