/**
 * The part of a prom-client `Registry` the metrics use (structural, so that these typings do not need
 * prom-client installed).
 */
export interface MetricsRegistryLike {
  /** Registers one metric (prom-client's `Registry.registerMetric`). */
  registerMetric(metric: unknown): void;
}

/** Module option `metrics`: Prometheus metrics through prom-client (an optional peer dependency). */
export interface MetricsOptions {
  /** The prom-client `Registry` to register the metrics in. @default prom-client's global `register` */
  registry?: MetricsRegistryLike;
  /** Prefix of every metric name. @default 'dq_' */
  prefix?: string;
  /** Buckets (seconds) of the handler duration histogram. @default [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60] */
  durationBuckets?: number[];
  /** Buckets (seconds) of the lateness histogram (start − due). @default [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 300] */
  latenessBuckets?: number[];
  /**
   * Count the library's own types too in the counters and histograms, each under its own `type` label: the
   * runs of a `@DistributedCron` method are tasks of type `__cron__.<schedule>` (the mover of delayed ordered
   * tasks, `__route__.<qId>`, and the schedule ticks, `__cron__`, report no lifecycle events).
   * @default false
   */
  includeInternalTypes?: boolean;
}

/** Module option `tracing`: OpenTelemetry spans through `@opentelemetry/api` (an optional peer dependency). */
export interface TracingOptions {
  /** Name of the tracer the spans come from. @default 'nestjs-distributed-queue' */
  tracerName?: string;
}
