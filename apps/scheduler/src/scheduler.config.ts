import { randomBytes } from 'crypto';
import type { RedisConnection } from 'nestjs-distributed-queue';

/** A start-up problem the user can fix (a bad setting): main prints its message without a stack. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The scheduler's settings (from the environment: see `schedulerConfigFromEnv`). */
export interface SchedulerConfig {
  connection: RedisConnection;
  keyPrefix: string;
  /** Shared with every client application (their `service.secret`). */
  secret: string;
  /** Bearer tokens of the HTTP API (`Authorization: Bearer <token>`). */
  apiTokens: string[];
  port: number;
  syncIntervalMs: number;
  visibilityTimeoutMs: number;
  shutdownTimeoutMs: number;
  /** The largest request body taken, by the HTTP API and from applications without Redis (`scheduler.maxRequestBytes`). */
  maxRequestBytes: number;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new StartupError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

/**
 * Reads the settings:
 * - `DQ_CONNECTION` (JSON connection option, e.g. a cluster node list) or `REDIS_URL` (default redis://127.0.0.1:6379);
 * - `DQ_PREFIX` (default 'dq': the same as the client applications' `keyPrefix`);
 * - `DQ_SERVICE_SECRET` (required, at least 16 characters);
 * - `SCHEDULER_API_TOKENS` (comma-separated; default one random token, printed at start-up);
 * - `PORT` (default 4000), `SCHEDULER_SYNC_MS` (1000), `SCHEDULER_VISIBILITY_MS` (30000), `SCHEDULER_SHUTDOWN_MS` (10000);
 * - `SCHEDULER_MAX_REQUEST_BYTES` (4 MiB; at least 1 MiB + 64 KiB: one task of the largest payload).
 */
export function schedulerConfigFromEnv(env: NodeJS.ProcessEnv = process.env): SchedulerConfig {
  const secret = env.DQ_SERVICE_SECRET?.trim() ?? '';
  if (secret.length < 16) throw new StartupError('DQ_SERVICE_SECRET is required: the secret shared with the applications, at least 16 characters');
  let connection: RedisConnection = env.REDIS_URL?.trim() || 'redis://127.0.0.1:6379';
  if (env.DQ_CONNECTION?.trim()) {
    try {
      connection = JSON.parse(env.DQ_CONNECTION) as RedisConnection;
    } catch {
      throw new StartupError('DQ_CONNECTION must be JSON (a URL string, ioredis options or { "cluster": [...] })');
    }
  }
  const apiTokens = (env.SCHEDULER_API_TOKENS ?? '').split(',').map((t) => t.trim()).filter(Boolean);
  if (apiTokens.some((t) => t.length < 16)) throw new StartupError('SCHEDULER_API_TOKENS: every token must have at least 16 characters');
  return {
    connection,
    keyPrefix: env.DQ_PREFIX?.trim() || 'dq',
    secret,
    apiTokens: apiTokens.length > 0 ? apiTokens : [randomBytes(16).toString('hex')],
    port: int(env, 'PORT', 4000, 0, 65535),
    syncIntervalMs: int(env, 'SCHEDULER_SYNC_MS', 1000, 50, 60_000),
    visibilityTimeoutMs: int(env, 'SCHEDULER_VISIBILITY_MS', 30_000, 1000, 86_400_000),
    shutdownTimeoutMs: int(env, 'SCHEDULER_SHUTDOWN_MS', 10_000, 0, 600_000),
    maxRequestBytes: int(env, 'SCHEDULER_MAX_REQUEST_BYTES', 4 * 1024 * 1024, 1024 * 1024 + 64 * 1024, 2 ** 31 - 1),
  };
}

export const SCHEDULER_CONFIG = Symbol('SCHEDULER_CONFIG');
