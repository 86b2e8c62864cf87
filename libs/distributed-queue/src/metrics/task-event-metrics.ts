import type { Registry } from 'prom-client';
import { isInternalType } from '../distributed-queue.constants';
import { ANY_TYPE_WITH_INTERNAL, type TaskEventBus } from '../events/task-event-bus';
import type { TaskEvent, TaskEventName } from '../interfaces/task-event.interface';
import type { ResolvedMetricsOptions } from '../options/resolve-observability';
import { registeredMetric } from './metric-registration';
import { TypeCounter, TypeHistogram } from './type-metrics';

/** Counter name suffix per local event counted (`retrying` events count retries). */
const COUNTED: Partial<Record<TaskEventName, string>> = {
  completed: 'tasks_completed_total',
  failed: 'tasks_failed_total',
  retrying: 'tasks_retried_total',
  dead: 'tasks_dead_total',
  rateLimited: 'tasks_rate_limited_total',
};

const HELP: Record<string, string> = {
  tasks_submitted_total: 'Tasks this instance submitted that were created or queued',
  tasks_completed_total: 'Tasks whose handler succeeded in this instance',
  tasks_failed_total: 'Failed attempts (error, timeout, cancel, lost lease) in this instance',
  tasks_retried_total: 'Failed attempts this instance scheduled for a retry',
  tasks_dead_total: 'Tasks this instance moved to dead letters',
  tasks_rate_limited_total: 'Tasks this instance handed back because their handler threw RateLimitedError (no attempt spent)',
};

/**
 * Counters and histograms fed by this instance's own work: submits (the bus's submit reports) and the
 * local lifecycle events of the tasks it ran. Each instance counts what it did; Prometheus sums over
 * instances. Returns a function that stops counting.
 */
export function attachTaskEventMetrics(registry: Registry, options: ResolvedMetricsOptions, bus: TaskEventBus): () => void {
  const register = <M extends TypeCounter | TypeHistogram>(metric: M): M => {
    const kind = metric.constructor as new (...args: never[]) => M;
    return registeredMetric(registry, metric.name, kind, () => {
      registry.registerMetric(metric as never);
      return metric;
    });
  };
  const counter = (suffix: string) => register(new TypeCounter(options.prefix + suffix, HELP[suffix]));
  const submitted = counter('tasks_submitted_total');
  const counters = new Map(Object.entries(COUNTED).map(([event, suffix]) => [event, counter(suffix)]));
  const duration = register(
    new TypeHistogram(`${options.prefix}handler_duration_seconds`, 'How long successful handler runs took, in seconds', options.durationBuckets),
  );
  const lateness = register(
    new TypeHistogram(`${options.prefix}lateness_seconds`, 'How long after its due time an attempt started (completed or failed), in seconds', options.latenessBuckets),
  );

  let attached = true;
  const skipped = (type: string): boolean => !options.includeInternalTypes && isInternalType(type);
  bus.onSubmitted((type, created) => {
    if (attached && !skipped(type)) submitted.inc(type, created);
  });
  const record = (event: TaskEvent): void => {
    const { type, dueAt } = event.task;
    if (skipped(type)) return;
    counters.get(event.event)?.inc(type);
    if (event.event === 'completed' && event.durationMs !== undefined) duration.observe(type, event.durationMs / 1000);
    const ran = event.event === 'completed' || event.event === 'failed';
    if (ran && event.startedAt !== undefined && dueAt > 0) lateness.observe(type, Math.max(0, event.startedAt - dueAt) / 1000);
  };
  const off = bus.on('local', options.includeInternalTypes ? ANY_TYPE_WITH_INTERNAL : '*', Object.keys(COUNTED) as TaskEventName[], record);
  // NOTE: service mode: the application's runs of delivered tasks; the scheduler decides retries and dead letters.
  const offRuns = bus.onHandlerRun(({ type, ok, dueAt, startedAt, durationMs }) => {
    if (skipped(type)) return;
    counters.get(ok ? 'completed' : 'failed')?.inc(type);
    if (ok) duration.observe(type, durationMs / 1000);
    if (dueAt > 0) lateness.observe(type, Math.max(0, startedAt - dueAt) / 1000);
  });
  return () => {
    attached = false;
    off();
    offRuns();
  };
}
