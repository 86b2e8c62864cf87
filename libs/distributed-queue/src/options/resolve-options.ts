import { InvalidOptionsError, InvalidTaskTypeError } from '../errors';
import { quote } from '../errors/quote';
import { checkBool, checkInt, checkKeys } from './checks';
import { checkConnectionOptions as checkConnection } from './connection-options';
import { MAX_TIMER_MS } from '../runtime/long-timer';
import { randomBytes } from 'crypto';
import {
  resolveEventsOptions, resolveMetricsOptions, resolveTracingOptions,
  type ResolvedEventsOptions, type ResolvedMetricsOptions, type ResolvedTracingOptions,
} from './resolve-observability';
import { resolveHistoryOptions, type ResolvedHistoryOptions } from './resolve-history';
import { DEFAULT_MAX_PAYLOAD_BYTES } from '../service/request-body';
import { DEFAULT_MAX_RESULT_BYTES } from '../runtime/result-text';
import { DEFAULT_MAX_PROGRESS_BYTES, DEFAULT_TASK_LOGS } from '../runtime/report-text';
import { DEFAULT_REDIS_TIMEOUT_MS, DEFAULT_SLOT_MIGRATION_TIMEOUT_MS } from '../redis/bounded-calls';
import { resolveDurability, type ResolvedDurability } from './resolve-durability';
import { resolveRateLimit, validateLimits } from './resolve-limits';
import { resolveServiceMode, type QueueMode, type ResolvedSchedulerOptions, type ResolvedServiceClientOptions } from './resolve-service';
import { hostname } from 'os';
import type {
  BackoffOptions,
  FlowOptions,
  RateLimitOptions,
  DistributedQueueModuleOptions,
  RedisConnection,
  RouteQueueOptions,
  TaskLogsOptions,
  TaskWorkerOptions,
} from '../interfaces';
import { DOT_SEGMENT_RULE, isDotSegment, isStorable, STORABLE_RULE } from '../runtime/storable-text';
import { isInternalType } from '../distributed-queue.constants';

/** Options with every default applied. */
export type ResolvedWorkerOptions = Required<Omit<TaskWorkerOptions, 'backoff' | 'rateLimit' | 'globalConcurrency' | 'defaultPriority' | 'agingMs' | 'groupConcurrency' | 'groupRateLimit'>> & {
  backoff: Required<BackoffOptions>;
  /** The fleet-wide rate limit, its burst resolved; absent: none. */
  rateLimit?: Required<RateLimitOptions>;
  /** The fleet-wide concurrency; absent: none. */
  globalConcurrency?: number;
  /** The priority of tasks submitted without one; absent: 0. */
  defaultPriority?: number;
  /** The aging step of priorities (ms); absent: none. */
  agingMs?: number;
  /** Each group's fleet-wide concurrency; absent: none. */
  groupConcurrency?: number;
  /** Each group's rate limit, its burst resolved; absent: none. */
  groupRateLimit?: Required<RateLimitOptions>;
};

/** Route queue options with defaults applied. */
export type ResolvedRouteOptions = Required<RouteQueueOptions>;

/** Module options with defaults applied (per-type options are merged later, per type). */
export interface ResolvedModuleOptions {
  connection: RedisConnection;
  keyPrefix: string;
  workers: boolean;
  shutdownTimeoutMs: number;
  redisTimeoutMs: number;
  slotMigrationTimeoutMs: number;
  startupTimeoutMs: number;
  waitForRedis: boolean;
  allowEviction: boolean;
  /** null: calls resolve once the master applied them (no `WAIT`). */
  durability: ResolvedDurability | null;
  defaults: ResolvedWorkerOptions;
  /** `defaults` as the application gave them (to tell which were set). */
  declaredDefaults?: TaskWorkerOptions;
  types: Record<string, TaskWorkerOptions>;
  strictTypes: boolean;
  maxPayloadBytes: number;
  maxResultBytes: number;
  maxProgressBytes: number;
  taskLogs: Required<TaskLogsOptions>;
  keepDone: number;
  flows: Required<FlowOptions>;
  route?: ResolvedRouteOptions;
  events: ResolvedEventsOptions;
  /** null: no metrics. */
  metrics: ResolvedMetricsOptions | null;
  /** null: no tracing. */
  tracing: ResolvedTracingOptions | null;
  /** null: no task history. */
  history: ResolvedHistoryOptions | null;
  /** Whether this instance handles schedule ticks; undefined: when it has `@DistributedCron` methods. */
  schedules?: boolean;
  /** Where this application's workers run. */
  mode: QueueMode;
  /** Client mode's options (mode 'service'), else null. */
  service: ResolvedServiceClientOptions | null;
  /** The scheduler's options (mode 'scheduler'), else null. */
  scheduler: ResolvedSchedulerOptions | null;
}

export const DEFAULT_WORKER_OPTIONS: ResolvedWorkerOptions = {
  ordered: false,
  concurrency: 1,
  timeoutMs: 60_000,
  maxAttempts: 3,
  backoff: { type: 'exponential', delayMs: 1000, maxDelayMs: 3_600_000, jitter: 0.2 },
  visibilityTimeoutMs: 30_000,
  pollIntervalMs: 1000,
};

/** How long start-up waits for Redis by default. */
export const DEFAULT_STARTUP_TIMEOUT_MS = 10_000;

/** The longest delay, backoff or lease kept in Redis: 100 years. */
export const MAX_DELAY_MS = 100 * 365 * 24 * 3600_000;

/** Handlers of an ordered worker at once in one process when no `concurrency` is set for it. */
export const DEFAULT_ORDERED_CONCURRENCY = 32;

const MODULE_KEYS = [
  'connection', 'keyPrefix', 'workers', 'shutdownTimeoutMs', 'defaults', 'types', 'strictTypes',
  'maxPayloadBytes', 'maxResultBytes', 'maxProgressBytes', 'taskLogs', 'keepDone', 'flows', 'redisTimeoutMs', 'slotMigrationTimeoutMs', 'startupTimeoutMs', 'waitForRedis', 'allowEviction', 'durability', 'route', 'events', 'metrics', 'tracing', 'history', 'mode', 'service', 'scheduler', 'schedules',
];
const WORKER_KEYS = ['ordered', 'concurrency', 'timeoutMs', 'maxAttempts', 'backoff', 'visibilityTimeoutMs', 'pollIntervalMs', 'rateLimit', 'globalConcurrency', 'defaultPriority', 'agingMs', 'groupConcurrency', 'groupRateLimit'];
const BACKOFF_KEYS = ['type', 'delayMs', 'maxDelayMs', 'jitter'];

/** Characters a type or prefix may not hold: braces would break the Redis Cluster hash tag. */
const RESERVED = /[{}\s]/;

/** Validates partial worker options (from a decorator, `defaults` or `types`); throws naming the option. */
export function validateWorkerOptions(options: TaskWorkerOptions | undefined, path: string): void {
  checkKeys(options, WORKER_KEYS, path);
  if (!options) return;
  checkBool(options.ordered, `${path}.ordered`);
  checkInt(options.concurrency, `${path}.concurrency`, 1, 1000);
  // NOTE: durations run by a repeating Node timer stop at MAX_TIMER_MS (2^31-1 ms, about 24.8 days);
  // one-shot waits (timeoutMs) and durations kept in Redis go to MAX_DELAY_MS.
  checkInt(options.timeoutMs, `${path}.timeoutMs`, 1, MAX_DELAY_MS);
  checkInt(options.maxAttempts, `${path}.maxAttempts`, 1, 1000);
  checkInt(options.visibilityTimeoutMs, `${path}.visibilityTimeoutMs`, 100, MAX_TIMER_MS);
  checkInt(options.pollIntervalMs, `${path}.pollIntervalMs`, 10, MAX_TIMER_MS);
  validateLimits(options, path);
  const backoff = options.backoff;
  checkKeys(backoff, BACKOFF_KEYS, `${path}.backoff`);
  if (!backoff) return;
  if (backoff.type !== undefined && backoff.type !== 'fixed' && backoff.type !== 'exponential') {
    throw new InvalidOptionsError(`${path}.backoff.type`, `must be 'fixed' or 'exponential'`);
  }
  checkInt(backoff.delayMs, `${path}.backoff.delayMs`, 0, MAX_DELAY_MS);
  checkInt(backoff.maxDelayMs, `${path}.backoff.maxDelayMs`, 0, MAX_DELAY_MS);
  if (backoff.jitter !== undefined && (typeof backoff.jitter !== 'number' || !(backoff.jitter >= 0 && backoff.jitter <= 1))) {
    throw new InvalidOptionsError(`${path}.backoff.jitter`, `must be a number from 0 to 1, got ${quote(backoff.jitter)}`);
  }
}

/** Layers worker options: later layers override earlier ones; backoff merges field by field. */
export function mergeWorkerOptions(base: ResolvedWorkerOptions, ...layers: (TaskWorkerOptions | undefined)[]): ResolvedWorkerOptions {
  let out = base;
  for (const layer of layers) {
    if (!layer) continue;
    const defined = Object.fromEntries(Object.entries(layer).filter(([, v]) => v !== undefined));
    out = { ...out, ...defined, backoff: { ...out.backoff, ...(layer.backoff ?? {}) } };
    if (layer.rateLimit) out.rateLimit = resolveRateLimit(layer.rateLimit);
    if (layer.groupRateLimit) out.groupRateLimit = resolveRateLimit(layer.groupRateLimit);
  }
  return out;
}

/** Throws `InvalidTaskTypeError` unless `type` can name a type an application declares (a worker, `types`): not an internal one. */
export function assertDeclaredType(type: unknown): asserts type is string {
  assertTaskType(type);
  if (isInternalType(type)) throw new InvalidTaskTypeError(type, 'must not start with "__route__." or "__cron__": those name the library\'s internal types');
}

/** Throws `InvalidTaskTypeError` unless `type` can name a queue. */
export function assertTaskType(type: unknown): asserts type is string {
  if (typeof type !== 'string' || type.length === 0) throw new InvalidTaskTypeError(type, 'must be a non-empty string');
  if (type.length > 200) throw new InvalidTaskTypeError(type, 'must be at most 200 characters');
  if (RESERVED.test(type)) throw new InvalidTaskTypeError(type, 'must not contain braces or white space');
  if (!isStorable(type)) throw new InvalidTaskTypeError(type, `must be a string ${STORABLE_RULE}`);
  if (isDotSegment(type)) throw new InvalidTaskTypeError(type, `must be a name ${DOT_SEGMENT_RULE}`);
}

const ROUTE_KEYS = [
  'qId', 'partitions', 'maxPartitionSize', 'rejectStrategy', 'machineId', 'heartbeatMs', 'offlineMs', 'idleMs',
  'rebalanceMs', 'batchSize', 'keyConcurrency', 'maxDeadLetters', 'luaLog',
];

function resolveRouteOptions(route: RouteQueueOptions | undefined): ResolvedRouteOptions | undefined {
  if (route === undefined) return undefined;
  checkKeys(route, ROUTE_KEYS, 'route');
  if (typeof route.qId !== 'string' || route.qId.length === 0 || RESERVED.test(route.qId) || !isStorable(route.qId)) {
    throw new InvalidOptionsError('route.qId', `is required: a short string without braces or white space, ${STORABLE_RULE}`);
  }
  checkInt(route.partitions, 'route.partitions', 1, 4096);
  checkInt(route.maxPartitionSize, 'route.maxPartitionSize', 1);
  if (route.rejectStrategy !== undefined && !['Discard', 'DiscardOldest', 'Exception'].includes(route.rejectStrategy)) {
    throw new InvalidOptionsError('route.rejectStrategy', "must be 'Discard', 'DiscardOldest' or 'Exception'");
  }
  if (route.machineId !== undefined && (typeof route.machineId !== 'string' || route.machineId.length === 0 || !isStorable(route.machineId))) {
    throw new InvalidOptionsError('route.machineId', `must be a non-empty string ${STORABLE_RULE}`);
  }
  for (const key of ['heartbeatMs', 'rebalanceMs'] as const) checkInt(route[key], `route.${key}`, 50, MAX_TIMER_MS);
  for (const key of ['offlineMs', 'idleMs'] as const) checkInt(route[key], `route.${key}`, 50, MAX_DELAY_MS);
  checkInt(route.batchSize, 'route.batchSize', 1, 1000);
  checkInt(route.keyConcurrency, 'route.keyConcurrency', 1, 1000);
  checkInt(route.maxDeadLetters, 'route.maxDeadLetters', 1);
  checkBool(route.luaLog, 'route.luaLog');
  const resolved: ResolvedRouteOptions = {
    qId: route.qId,
    partitions: route.partitions ?? 8,
    maxPartitionSize: route.maxPartitionSize ?? 50_000,
    rejectStrategy: route.rejectStrategy ?? 'Discard',
    // NOTE: random part: two applications in one process (or a pid reused in a container) are two machines.
    machineId: route.machineId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
    heartbeatMs: route.heartbeatMs ?? 5000,
    offlineMs: route.offlineMs ?? 150_000,
    idleMs: route.idleMs ?? 300_000,
    rebalanceMs: route.rebalanceMs ?? 10_000,
    batchSize: route.batchSize ?? 100,
    keyConcurrency: route.keyConcurrency ?? 32,
    maxDeadLetters: route.maxDeadLetters ?? 10_000,
    luaLog: route.luaLog ?? false,
  };
  if (resolved.offlineMs <= resolved.heartbeatMs) {
    throw new InvalidOptionsError('route.offlineMs', `must be longer than route.heartbeatMs (${resolved.heartbeatMs})`);
  }
  if (resolved.idleMs < resolved.offlineMs) {
    throw new InvalidOptionsError('route.idleMs', `must be at least route.offlineMs (${resolved.offlineMs}), or partitions are assigned twice`);
  }
  return resolved;
}

/** Applies defaults and validates; throws `InvalidOptionsError` naming the first bad option. */
export function resolveModuleOptions(options: DistributedQueueModuleOptions = {}): ResolvedModuleOptions {
  checkKeys(options, MODULE_KEYS, '');
  checkConnection(options.connection);
  const keyPrefix = options.keyPrefix ?? 'dq';
  if (typeof keyPrefix !== 'string' || keyPrefix.length === 0 || RESERVED.test(keyPrefix) || !isStorable(keyPrefix)) {
    throw new InvalidOptionsError('keyPrefix', `must be a non-empty string without braces or white space, ${STORABLE_RULE}`);
  }
  checkBool(options.workers, 'workers');
  checkBool(options.strictTypes, 'strictTypes');
  checkBool(options.schedules, 'schedules');
  checkBool(options.waitForRedis, 'waitForRedis');
  checkBool(options.allowEviction, 'allowEviction');
  checkInt(options.shutdownTimeoutMs, 'shutdownTimeoutMs', 0, MAX_TIMER_MS);
  checkInt(options.redisTimeoutMs, 'redisTimeoutMs', 50, MAX_TIMER_MS);
  checkInt(options.slotMigrationTimeoutMs, 'slotMigrationTimeoutMs', 0, MAX_TIMER_MS);
  checkInt(options.startupTimeoutMs, 'startupTimeoutMs', 0, MAX_TIMER_MS);
  checkInt(options.maxPayloadBytes, 'maxPayloadBytes', 1, 512 * 1024 * 1024);
  checkInt(options.maxResultBytes, 'maxResultBytes', 1, 512 * 1024 * 1024);
  checkInt(options.maxProgressBytes, 'maxProgressBytes', 2, 1024 * 1024);
  checkInt(options.keepDone, 'keepDone', 0, 1_000_000);
  const taskLogs = resolveTaskLogs(options.taskLogs);
  const flows = resolveFlowOptions(options.flows);
  validateWorkerOptions(options.defaults, 'defaults');
  const types = options.types ?? {};
  if (types === null || typeof types !== 'object' || Array.isArray(types)) {
    throw new InvalidOptionsError('types', 'must be an object of type name to worker options');
  }
  for (const [type, typeOptions] of Object.entries(types)) {
    try {
      assertDeclaredType(type);
    } catch (error) {
      throw new InvalidOptionsError(`types.${type}`, (error as Error).message);
    }
    validateWorkerOptions(typeOptions, `types.${type}`);
  }
  const events = resolveEventsOptions(options.events);
  const modes = resolveServiceMode(options);
  const redisTimeoutMs = options.redisTimeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS;
  return {
    ...modes,
    schedules: options.schedules,
    connection: options.connection ?? 'redis://127.0.0.1:6379',
    keyPrefix,
    workers: options.workers ?? true,
    shutdownTimeoutMs: options.shutdownTimeoutMs ?? 10_000,
    redisTimeoutMs,
    slotMigrationTimeoutMs: Math.max(redisTimeoutMs, options.slotMigrationTimeoutMs ?? DEFAULT_SLOT_MIGRATION_TIMEOUT_MS),
    startupTimeoutMs: options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS,
    waitForRedis: options.waitForRedis ?? false,
    allowEviction: options.allowEviction ?? false,
    durability: resolveDurability(options.durability, redisTimeoutMs),
    defaults: mergeWorkerOptions(DEFAULT_WORKER_OPTIONS, options.defaults),
    declaredDefaults: options.defaults,
    // NOTE: no prototype: a type named "constructor" or "toString" has no options unless given some
    types: Object.assign(Object.create(null) as Record<string, TaskWorkerOptions>, types),
    // NOTE: the scheduler runs the types the registry holds; its HTTP API checks them there.
    strictTypes: modes.mode === 'scheduler' ? false : options.strictTypes ?? true,
    maxPayloadBytes: options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES,
    maxResultBytes: options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
    maxProgressBytes: options.maxProgressBytes ?? DEFAULT_MAX_PROGRESS_BYTES,
    taskLogs,
    keepDone: options.keepDone ?? 1000,
    flows,
    route: resolveRouteOptions(options.route),
    events,
    history: resolveHistoryOptions(options.history, events.stream),
    metrics: resolveMetricsOptions(options.metrics),
    tracing: resolveTracingOptions(options.tracing),
  };
}

/** The module option `flows`, checked, with its defaults. */
function resolveFlowOptions(flows: FlowOptions | undefined): Required<FlowOptions> {
  if (flows !== undefined && (flows === null || typeof flows !== 'object' || Array.isArray(flows))) {
    throw new InvalidOptionsError('flows', 'must be an object { retentionMs?, maxResultBytes? }');
  }
  for (const name of Object.keys(flows ?? {})) {
    if (name !== 'retentionMs' && name !== 'maxResultBytes') throw new InvalidOptionsError(`flows.${name}`, 'unknown option (known: retentionMs, maxResultBytes)');
  }
  checkInt(flows?.retentionMs, 'flows.retentionMs', 1000, MAX_TIMER_MS);
  checkInt(flows?.maxResultBytes, 'flows.maxResultBytes', 2, 64 * 1024 * 1024);
  return { retentionMs: flows?.retentionMs ?? 86_400_000, maxResultBytes: flows?.maxResultBytes ?? 65_536 };
}

/** The module option `taskLogs`, checked, with its defaults. */
function resolveTaskLogs(logs: TaskLogsOptions | undefined): Required<TaskLogsOptions> {
  if (logs !== undefined && (logs === null || typeof logs !== 'object' || Array.isArray(logs))) {
    throw new InvalidOptionsError('taskLogs', 'must be an object { maxLines?, maxBytes? }');
  }
  for (const name of Object.keys(logs ?? {})) {
    if (name !== 'maxLines' && name !== 'maxBytes') throw new InvalidOptionsError(`taskLogs.${name}`, 'unknown option (known: maxLines, maxBytes)');
  }
  checkInt(logs?.maxLines, 'taskLogs.maxLines', 1, 10_000);
  checkInt(logs?.maxBytes, 'taskLogs.maxBytes', 1024, 1024 * 1024);
  return { maxLines: logs?.maxLines ?? DEFAULT_TASK_LOGS.maxLines, maxBytes: logs?.maxBytes ?? DEFAULT_TASK_LOGS.maxBytes };
}
