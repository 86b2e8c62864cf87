import { InvalidOptionsError, InvalidTaskTypeError } from '../errors';
import type {
  DistributedQueueModuleOptions,
  RedisConnection,
  ResolvedWorkerOptions,
  TaskWorkerOptions,
} from '../interfaces';

/** Module options with defaults applied (per-type options are merged later, per type). */
export interface ResolvedModuleOptions {
  connection: RedisConnection;
  keyPrefix: string;
  workers: boolean;
  shutdownTimeoutMs: number;
  defaults: ResolvedWorkerOptions;
  types: Record<string, TaskWorkerOptions>;
  strictTypes: boolean;
  maxPayloadBytes: number;
  keepDone: number;
}

export const DEFAULT_WORKER_OPTIONS: ResolvedWorkerOptions = {
  concurrency: 1,
  timeoutMs: 60_000,
  maxAttempts: 3,
  backoff: { type: 'exponential', delayMs: 1000, maxDelayMs: 3_600_000, jitter: 0.2 },
  visibilityTimeoutMs: 30_000,
  pollIntervalMs: 1000,
};

const MODULE_KEYS = [
  'connection', 'keyPrefix', 'workers', 'shutdownTimeoutMs', 'defaults', 'types', 'strictTypes',
  'maxPayloadBytes', 'keepDone',
];
const WORKER_KEYS = ['concurrency', 'timeoutMs', 'maxAttempts', 'backoff', 'visibilityTimeoutMs', 'pollIntervalMs'];
const BACKOFF_KEYS = ['type', 'delayMs', 'maxDelayMs', 'jitter'];

/** Characters a type or prefix may not hold: braces would break the Redis Cluster hash tag. */
const RESERVED = /[{}\s]/;

function checkKeys(value: unknown, allowed: string[], path: string): void {
  if (value === undefined) return;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidOptionsError(path || 'options', 'must be an object');
  }
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw new InvalidOptionsError(path ? `${path}.${key}` : key, `unknown option (known: ${allowed.join(', ')})`);
    }
  }
}

function checkInt(value: unknown, path: string, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidOptionsError(path, `must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
}

function checkBool(value: unknown, path: string): void {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new InvalidOptionsError(path, `must be true or false, got ${JSON.stringify(value)}`);
  }
}

/** Validates partial worker options (from a decorator, `defaults` or `types`); throws naming the option. */
export function validateWorkerOptions(options: TaskWorkerOptions | undefined, path: string): void {
  checkKeys(options, WORKER_KEYS, path);
  if (!options) return;
  checkInt(options.concurrency, `${path}.concurrency`, 1, 1000);
  checkInt(options.timeoutMs, `${path}.timeoutMs`, 1);
  checkInt(options.maxAttempts, `${path}.maxAttempts`, 1, 1000);
  checkInt(options.visibilityTimeoutMs, `${path}.visibilityTimeoutMs`, 100);
  checkInt(options.pollIntervalMs, `${path}.pollIntervalMs`, 10);
  const backoff = options.backoff;
  checkKeys(backoff, BACKOFF_KEYS, `${path}.backoff`);
  if (!backoff) return;
  if (backoff.type !== undefined && backoff.type !== 'fixed' && backoff.type !== 'exponential') {
    throw new InvalidOptionsError(`${path}.backoff.type`, `must be 'fixed' or 'exponential'`);
  }
  checkInt(backoff.delayMs, `${path}.backoff.delayMs`, 0);
  checkInt(backoff.maxDelayMs, `${path}.backoff.maxDelayMs`, 0);
  if (backoff.jitter !== undefined && (typeof backoff.jitter !== 'number' || !(backoff.jitter >= 0 && backoff.jitter <= 1))) {
    throw new InvalidOptionsError(`${path}.backoff.jitter`, 'must be a number from 0 to 1');
  }
}

/** Layers worker options: later layers override earlier ones; backoff merges field by field. */
export function mergeWorkerOptions(base: ResolvedWorkerOptions, ...layers: (TaskWorkerOptions | undefined)[]): ResolvedWorkerOptions {
  let out = base;
  for (const layer of layers) {
    if (!layer) continue;
    const defined = Object.fromEntries(Object.entries(layer).filter(([, v]) => v !== undefined));
    out = { ...out, ...defined, backoff: { ...out.backoff, ...(layer.backoff ?? {}) } };
  }
  return out;
}

/** Throws `InvalidTaskTypeError` unless `type` can name a queue. */
export function assertTaskType(type: unknown): asserts type is string {
  if (typeof type !== 'string' || type.length === 0) throw new InvalidTaskTypeError(type, 'must be a non-empty string');
  if (type.length > 200) throw new InvalidTaskTypeError(type, 'must be at most 200 characters');
  if (RESERVED.test(type)) throw new InvalidTaskTypeError(type, 'must not contain braces or white space');
}

function checkConnection(connection: unknown): void {
  if (connection === undefined || typeof connection === 'string') {
    if (typeof connection === 'string' && !/^rediss?:\/\//.test(connection)) {
      throw new InvalidOptionsError('connection', 'a URL must start with redis:// or rediss://');
    }
    return;
  }
  if (connection === null || typeof connection !== 'object') {
    throw new InvalidOptionsError('connection', 'must be a URL, ioredis options or { cluster: [...] }');
  }
  if ('cluster' in connection) {
    const nodes = (connection as { cluster: unknown }).cluster;
    if (!Array.isArray(nodes) || nodes.length === 0) {
      throw new InvalidOptionsError('connection.cluster', 'must be a non-empty list of nodes');
    }
  }
}

/** Applies defaults and validates; throws `InvalidOptionsError` naming the first bad option. */
export function resolveModuleOptions(options: DistributedQueueModuleOptions = {}): ResolvedModuleOptions {
  checkKeys(options, MODULE_KEYS, '');
  checkConnection(options.connection);
  const keyPrefix = options.keyPrefix ?? 'dq';
  if (typeof keyPrefix !== 'string' || keyPrefix.length === 0 || RESERVED.test(keyPrefix)) {
    throw new InvalidOptionsError('keyPrefix', 'must be a non-empty string without braces or white space');
  }
  checkBool(options.workers, 'workers');
  checkBool(options.strictTypes, 'strictTypes');
  checkInt(options.shutdownTimeoutMs, 'shutdownTimeoutMs', 0);
  checkInt(options.maxPayloadBytes, 'maxPayloadBytes', 1, 512 * 1024 * 1024);
  checkInt(options.keepDone, 'keepDone', 0, 1_000_000);
  validateWorkerOptions(options.defaults, 'defaults');
  const types = options.types ?? {};
  if (types === null || typeof types !== 'object' || Array.isArray(types)) {
    throw new InvalidOptionsError('types', 'must be an object of type name to worker options');
  }
  for (const [type, typeOptions] of Object.entries(types)) {
    try {
      assertTaskType(type);
    } catch (error) {
      throw new InvalidOptionsError(`types.${type}`, (error as Error).message);
    }
    validateWorkerOptions(typeOptions, `types.${type}`);
  }
  return {
    connection: options.connection ?? 'redis://127.0.0.1:6379',
    keyPrefix,
    workers: options.workers ?? true,
    shutdownTimeoutMs: options.shutdownTimeoutMs ?? 10_000,
    defaults: mergeWorkerOptions(DEFAULT_WORKER_OPTIONS, options.defaults),
    types,
    strictTypes: options.strictTypes ?? true,
    maxPayloadBytes: options.maxPayloadBytes ?? 1024 * 1024,
    keepDone: options.keepDone ?? 1000,
  };
}
