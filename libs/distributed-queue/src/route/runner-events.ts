import type { TaskEventBus } from '../events/task-event-bus';
import type { Task } from '../interfaces';
import type { TaskEvent, TaskEventName } from '../interfaces/task-event.interface';
import type { RouteItem } from './route.store';

/** What an event of a task adds to its task: the attempt's error or result, and when it started. */
export interface EventExtra {
  error?: Error;
  result?: unknown;
  startedAt?: number;
}

/**
 * The local lifecycle events of the tasks one partition runner runs (skipped when nobody listens).
 * `failed`, `retrying` and `recovered` are emitted at once: Redis records no failed attempt of an ordered
 * task (its retries run in process), and `recovered` follows the reply of the take that replayed it.
 * `completed` and `dead` are Redis's to record, with the item's ack: they are kept (`later`) until
 * PartitionAcks has the ack's reply.
 */
export class RunnerEvents {
  /** The `completed` or `dead` event of each finished item, until its ack is handed to PartitionAcks. */
  private readonly outcomes = new Map<number, TaskEvent>();

  constructor(
    private readonly bus: TaskEventBus | undefined,
    private readonly view: (item: RouteItem, attempt: number) => Task,
  ) {}

  /** Emits an event now. */
  now(item: RouteItem, event: TaskEventName, attempt: number, extra: EventExtra): void {
    const built = this.build(item, event, attempt, extra);
    if (built) this.bus!.emit(built);
  }

  /** Keeps an event until the item's ack is in Redis (see `take`). */
  later(item: RouteItem, event: TaskEventName, attempt: number, extra: EventExtra): void {
    const built = this.build(item, event, attempt, extra);
    if (built) this.outcomes.set(item.seq, built);
  }

  /** The kept event of an item being acked (undefined when none), for PartitionAcks to emit after the ack. */
  take(seq: number): TaskEvent | undefined {
    const event = this.outcomes.get(seq);
    if (event) this.outcomes.delete(seq);
    return event;
  }

  private build(item: RouteItem, event: TaskEventName, attempt: number, extra: EventExtra): TaskEvent | undefined {
    if (!this.bus?.wants('local', item.type, event)) return undefined;
    const at = Date.now();
    const durationMs = extra.startedAt === undefined ? undefined : at - extra.startedAt;
    return { event, scope: 'local', task: this.view(item, attempt), ...extra, durationMs, at };
  }
}
