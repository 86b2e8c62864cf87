import { InvalidOptionsError } from '../errors';
import type { EventsOptions, MetricsOptions, MetricsRegistryLike, TracingOptions } from '../interfaces';
import { MAX_TIMER_MS } from '../runtime/long-timer';
import { checkBool, checkInt, checkKeys } from './checks';

export type ResolvedEventsOptions = Required<EventsOptions>;

/** Metrics options with defaults applied; `registry` undefined means prom-client's global one. */
export interface ResolvedMetricsOptions {
  registry?: MetricsRegistryLike;
  prefix: string;
  durationBuckets: number[];
  latenessBuckets: number[];
  includeInternalTypes: boolean;
}

export type ResolvedTracingOptions = Required<TracingOptions>;

const EVENTS_KEYS = ['stream', 'streamMaxLen', 'followIntervalMs'];
const METRICS_KEYS = ['registry', 'prefix', 'durationBuckets', 'latenessBuckets', 'includeInternalTypes'];
const TRACING_KEYS = ['tracerName'];

/** Validates and completes the `events` option. */
export function resolveEventsOptions(events: EventsOptions | undefined): ResolvedEventsOptions {
  checkKeys(events, EVENTS_KEYS, 'events');
  checkBool(events?.stream, 'events.stream');
  checkInt(events?.streamMaxLen, 'events.streamMaxLen', 10, 10_000_000);
  checkInt(events?.followIntervalMs, 'events.followIntervalMs', 10, MAX_TIMER_MS);
  return { stream: events?.stream ?? true, streamMaxLen: events?.streamMaxLen ?? 10_000, followIntervalMs: events?.followIntervalMs ?? 200 };
}

function checkBuckets(value: unknown, path: string): void {
  if (value === undefined) return;
  const ok = Array.isArray(value) && value.length > 0 && value.every((v, i) => typeof v === 'number' && v > 0 && Number.isFinite(v) && (i === 0 || v > value[i - 1]));
  if (!ok) throw new InvalidOptionsError(path, 'must be a non-empty list of increasing positive numbers (seconds)');
}

/** Validates and completes the `metrics` option (false or absent: null). */
export function resolveMetricsOptions(metrics: boolean | MetricsOptions | undefined): ResolvedMetricsOptions | null {
  if (metrics === undefined || metrics === false) return null;
  const given = metrics === true ? {} : metrics;
  checkKeys(given, METRICS_KEYS, 'metrics');
  if (given.registry !== undefined && typeof (given.registry as MetricsRegistryLike | null)?.registerMetric !== 'function') {
    throw new InvalidOptionsError('metrics.registry', 'must be a prom-client Registry');
  }
  if (given.prefix !== undefined && (typeof given.prefix !== 'string' || !/^[a-zA-Z_:][a-zA-Z0-9_:]*$|^$/.test(given.prefix))) {
    throw new InvalidOptionsError('metrics.prefix', 'must be a valid Prometheus metric name prefix ([a-zA-Z_:][a-zA-Z0-9_:]*)');
  }
  checkBuckets(given.durationBuckets, 'metrics.durationBuckets');
  checkBuckets(given.latenessBuckets, 'metrics.latenessBuckets');
  checkBool(given.includeInternalTypes, 'metrics.includeInternalTypes');
  return {
    registry: given.registry,
    prefix: given.prefix ?? 'dq_',
    durationBuckets: given.durationBuckets ?? [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60],
    latenessBuckets: given.latenessBuckets ?? [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 300],
    includeInternalTypes: given.includeInternalTypes ?? false,
  };
}

/** Validates and completes the `tracing` option (false or absent: null). */
export function resolveTracingOptions(tracing: boolean | TracingOptions | undefined): ResolvedTracingOptions | null {
  if (tracing === undefined || tracing === false) return null;
  const given = tracing === true ? {} : tracing;
  checkKeys(given, TRACING_KEYS, 'tracing');
  if (given.tracerName !== undefined && (typeof given.tracerName !== 'string' || given.tracerName.length === 0)) {
    throw new InvalidOptionsError('tracing.tracerName', 'must be a non-empty string');
  }
  return { tracerName: given.tracerName ?? 'nestjs-distributed-queue' };
}
