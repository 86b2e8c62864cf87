import type { TaskEventBus } from '../events/task-event-bus';
import type { TaskEventName } from '../interfaces/task-event.interface';
import type { FailOutcome } from '../redis/script-outcome';
import type { RunningTask } from './running-task';

/** The event a recorded failure makes. */
const OUTCOME_EVENTS: Record<Exclude<FailOutcome, 'stale'>, TaskEventName> = { retried: 'retrying', dead: 'dead', dropped: 'cancelled' };

/** Reports the lifecycle events of the tasks one delay-queue consumer runs (skipped when nobody listens). */
export class ConsumerEvents {
  constructor(
    private readonly type: string,
    private readonly bus?: TaskEventBus,
  ) {}

  emit(task: RunningTask, event: TaskEventName, error?: Error, result?: unknown): void {
    if (!this.bus?.wants('local', this.type, event)) return;
    const { id, attempt, dueAt } = task.reservation;
    const view = task.view ?? { id, type: this.type, payload: undefined, attempt, dueAt };
    const at = Date.now();
    this.bus.emit({ event, scope: 'local', task: view, error, result, durationMs: at - task.startedAt, startedAt: task.startedAt, at });
  }

  /** The event of a recorded failure's outcome (none when the reservation was stale). */
  outcome(task: RunningTask, outcome: FailOutcome, error: Error): void {
    if (outcome !== 'stale') this.emit(task, OUTCOME_EVENTS[outcome], error);
  }
}
