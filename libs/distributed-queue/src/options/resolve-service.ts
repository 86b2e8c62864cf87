import { randomBytes } from 'crypto';
import { hostname } from 'os';
import { InvalidOptionsError } from '../errors';
import type { DistributedQueueModuleOptions, ServiceClientOptions, ServiceSchedulerOptions } from '../interfaces';
import { checkInt, checkKeys, PLAIN_NAME, PLAIN_NAME_RULE } from './checks';
import { DEFAULT_CLIENT_PATH } from '../service/scheduler-rpc';
import { DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_MAX_REQUEST_BYTES, REQUEST_OVERHEAD_BYTES } from '../service/request-body';

/** How the module runs: workers inside the app, as a client of the scheduler, or as the scheduler. */
export type QueueMode = 'plugin' | 'service' | 'scheduler';

export type ResolvedServiceClientOptions = Required<Omit<ServiceClientOptions, 'url'>> & Pick<ServiceClientOptions, 'url'>;
export type ResolvedSchedulerOptions = Required<ServiceSchedulerOptions>;

const MODES: QueueMode[] = ['plugin', 'service', 'scheduler'];
const CLIENT_KEYS = ['appName', 'secret', 'publicUrl', 'callbackPath', 'heartbeatMs', 'instanceTtlMs', 'instanceId', 'url', 'schedulerPath', 'maxRequestBytes'];
const SCHEDULER_KEYS = ['secret', 'syncIntervalMs', 'deliveryGraceMs', 'visibilityTimeoutMs', 'clientPath', 'maxRequestBytes'];

/** `maxRequestBytes` (client's callback or scheduler's client path): at least one task of the largest payload. */
function maxRequestBytes(value: number | undefined, option: string, maxPayloadBytes: number): number {
  const least = maxPayloadBytes + REQUEST_OVERHEAD_BYTES;
  checkInt(value, option, least, 2 ** 31 - 1);
  return value ?? Math.max(DEFAULT_MAX_REQUEST_BYTES, least);
}

function checkSecret(secret: unknown, path: string): string {
  if (typeof secret !== 'string' || secret.length < 16) throw new InvalidOptionsError(path, 'is required: a shared secret of at least 16 characters');
  return secret;
}

function checkName(value: unknown, path: string): void {
  if (value !== undefined && (typeof value !== 'string' || !PLAIN_NAME.test(value))) {
    throw new InvalidOptionsError(path, `must be ${PLAIN_NAME_RULE}`);
  }
}

function checkPath(path: unknown, option: string): string {
  if (typeof path !== 'string' || !/^\/[A-Za-z0-9._~\/-]*$/.test(path)) {
    throw new InvalidOptionsError(option, 'must be a path starting with "/" (letters, digits, ".", "_", "~", "-", "/")');
  }
  return path;
}

function resolveClient(service: ServiceClientOptions | undefined, maxPayloadBytes: number): ResolvedServiceClientOptions {
  if (service === undefined) throw new InvalidOptionsError('service', "is required with mode 'service' (appName, secret, publicUrl)");
  checkKeys(service, CLIENT_KEYS, 'service');
  if (service.appName === undefined) throw new InvalidOptionsError('service.appName', 'is required');
  checkName(service.appName, 'service.appName');
  checkName(service.instanceId, 'service.instanceId');
  const secret = checkSecret(service.secret, 'service.secret');
  if (typeof service.publicUrl !== 'string' || !/^https?:\/\/[^/\s]+\/?$/.test(service.publicUrl)) {
    throw new InvalidOptionsError('service.publicUrl', "is required: this instance's base URL, e.g. http://10.0.0.7:3000");
  }
  const callbackPath = checkPath(service.callbackPath ?? '/dq/deliveries', 'service.callbackPath');
  const schedulerPath = checkPath(service.schedulerPath ?? DEFAULT_CLIENT_PATH, 'service.schedulerPath');
  if (service.url !== undefined && (typeof service.url !== 'string' || !/^https?:\/\/[^/\s]+\/?$/.test(service.url))) {
    throw new InvalidOptionsError('service.url', "must be the scheduler's base URL, e.g. http://scheduler:4000");
  }
  checkInt(service.heartbeatMs, 'service.heartbeatMs', 100, 3_600_000);
  const heartbeatMs = service.heartbeatMs ?? 5000;
  checkInt(service.instanceTtlMs, 'service.instanceTtlMs', heartbeatMs + 1, 3 * 3_600_000);
  return {
    appName: service.appName,
    secret,
    publicUrl: service.publicUrl.replace(/\/$/, ''),
    callbackPath,
    heartbeatMs,
    instanceTtlMs: service.instanceTtlMs ?? 3 * heartbeatMs,
    url: service.url?.replace(/\/$/, ''),
    schedulerPath,
    maxRequestBytes: maxRequestBytes(service.maxRequestBytes, 'service.maxRequestBytes', maxPayloadBytes),
    instanceId: service.instanceId ?? `${hostname().replace(/[^A-Za-z0-9._:-]/g, '-')}-${process.pid}-${randomBytes(3).toString('hex')}`,
  };
}

function resolveScheduler(scheduler: ServiceSchedulerOptions | undefined, maxPayloadBytes: number): ResolvedSchedulerOptions {
  if (scheduler === undefined) throw new InvalidOptionsError('scheduler', "is required with mode 'scheduler' (secret)");
  checkKeys(scheduler, SCHEDULER_KEYS, 'scheduler');
  const secret = checkSecret(scheduler.secret, 'scheduler.secret');
  checkInt(scheduler.syncIntervalMs, 'scheduler.syncIntervalMs', 50, 60_000);
  checkInt(scheduler.deliveryGraceMs, 'scheduler.deliveryGraceMs', 0, 600_000);
  checkInt(scheduler.visibilityTimeoutMs, 'scheduler.visibilityTimeoutMs', 1000, 24 * 3_600_000);
  return {
    secret,
    syncIntervalMs: scheduler.syncIntervalMs ?? 1000,
    deliveryGraceMs: scheduler.deliveryGraceMs ?? 2000,
    visibilityTimeoutMs: scheduler.visibilityTimeoutMs ?? 30_000,
    clientPath: checkPath(scheduler.clientPath ?? DEFAULT_CLIENT_PATH, 'scheduler.clientPath'),
    maxRequestBytes: maxRequestBytes(scheduler.maxRequestBytes, 'scheduler.maxRequestBytes', maxPayloadBytes),
  };
}

const maxPayloadBytesOf = (options: DistributedQueueModuleOptions): number =>
  Number.isInteger(options.maxPayloadBytes) ? options.maxPayloadBytes! : DEFAULT_MAX_PAYLOAD_BYTES;

/** Validates `mode` with its `service` or `scheduler` options (the other must be absent). */
export function resolveServiceMode(options: DistributedQueueModuleOptions): {
  mode: QueueMode;
  service: ResolvedServiceClientOptions | null;
  scheduler: ResolvedSchedulerOptions | null;
} {
  const mode = options.mode ?? 'plugin';
  if (!MODES.includes(mode)) throw new InvalidOptionsError('mode', `must be one of ${MODES.map((m) => `'${m}'`).join(', ')}`);
  if (mode !== 'service' && options.service !== undefined) throw new InvalidOptionsError('service', "is only for mode 'service'");
  if (mode !== 'scheduler' && options.scheduler !== undefined) throw new InvalidOptionsError('scheduler', "is only for mode 'scheduler'");
  if (mode === 'service' && options.service?.url !== undefined) {
    // NOTE: with url the application has no Redis: options that need one are refused rather than ignored.
    for (const needsRedis of ['connection', 'history', 'route', 'durability'] as const) {
      if (options[needsRedis] !== undefined) throw new InvalidOptionsError(needsRedis, 'needs Redis: leave it out with service.url (the application reaches Redis only through the scheduler)');
    }
  }
  return {
    mode,
    // NOTE: maxPayloadBytes is checked by resolveModuleOptions; a bad one fails there first.
    service: mode === 'service' ? resolveClient(options.service, maxPayloadBytesOf(options)) : null,
    scheduler: mode === 'scheduler' ? resolveScheduler(options.scheduler, maxPayloadBytesOf(options)) : null,
  };
}
