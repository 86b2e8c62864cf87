import { countedBytes } from '../redis/server-memory';

/** One check of the health indicator: up or down, with what was measured. */
export interface HealthCheckDetail {
  /** Whether the check passes. */
  status: 'up' | 'down';
  /** Why it is down. */
  message?: string;
  [detail: string]: unknown;
}

/** What a consumer shows of itself to the health check. */
export interface ConsumerContact {
  type: string;
  lastContactAt: number;
  options: { visibilityTimeoutMs: number; pollIntervalMs: number };
}

/**
 * A running consumer is healthy while it reached Redis recently: an idle consumer fetches on every poll, a
 * busy one renews its leases a few times per visibility timeout, so silence past the longer of the
 * visibility timeout and two poll intervals means it cannot reach Redis (or its event loop is stuck).
 */
export function consumerHealth(consumer: ConsumerContact, now: number): HealthCheckDetail {
  const limitMs = Math.max(consumer.options.visibilityTimeoutMs, 2 * consumer.options.pollIntervalMs);
  const lastContactMsAgo = Math.max(0, now - consumer.lastContactAt);
  if (lastContactMsAgo <= limitMs) return { status: 'up', lastContactMsAgo, limitMs };
  return { status: 'down', message: `no contact with Redis for ${lastContactMsAgo} ms (limit ${limitMs} ms)`, lastContactMsAgo, limitMs };
}

/**
 * This machine is a member of its route queue while its last heartbeat is younger than `offlineMs`, after
 * which the scheduler evicts it and its partitions move.
 */
export function routeMemberHealth(queue: string, machine: string, lastHeartbeatAt: number, offlineMs: number, now: number): HealthCheckDetail {
  return heartbeatHealth({ queue, machine }, lastHeartbeatAt, offlineMs, now);
}

/** Up while the last heartbeat that reached Redis (epoch ms, 0: none yet) is younger than `limitMs`. */
export function heartbeatHealth(labels: Record<string, string>, lastHeartbeatAt: number, limitMs: number, now: number): HealthCheckDetail {
  const detail = { ...labels, limitMs };
  if (lastHeartbeatAt <= 0) return { status: 'down', message: 'no heartbeat reached Redis yet', ...detail };
  const lastHeartbeatMsAgo = Math.max(0, now - lastHeartbeatAt);
  if (lastHeartbeatMsAgo < limitMs) return { status: 'up', lastHeartbeatMsAgo, ...detail };
  return { status: 'down', message: `no heartbeat reached Redis for ${lastHeartbeatMsAgo} ms (offline after ${limitMs} ms)`, lastHeartbeatMsAgo, ...detail };
}

/** Up when every check is; the message names each failed check (`name: why`). */
export function overallHealth(checks: [name: string, detail: HealthCheckDetail][]): Pick<HealthCheckDetail, 'status' | 'message'> {
  const failed = checks.filter(([, detail]) => detail.status === 'down');
  if (failed.length === 0) return { status: 'up' };
  return { status: 'down', message: failed.map(([name, detail]) => `${name}: ${detail.message ?? 'down'}`).join('; ') };
}

/** What start-up reports of itself (with `waitForRedis`): see `StartupSteps`. */
export interface StartupContact {
  ready: boolean;
  pending: string[];
  since: number;
  reason?: string;
  failed?: string;
}

/**
 * Up once every part of the library has started; down, saying why, while it waits for Redis (since when,
 * the last connection error, what has not started) or after a part failed to start.
 */
export function startupHealth(state: StartupContact, target: string, now: number): HealthCheckDetail {
  if (state.ready) return { status: 'up' };
  const pending = state.pending;
  if (state.failed) return { status: 'down', message: state.failed, pending };
  const waitingMs = Math.max(0, now - state.since);
  const why = state.reason ? `: ${state.reason}` : '';
  return { status: 'down', message: `waiting for Redis at ${target} for ${Math.round(waitingMs / 1000)} s${why}; not started yet: ${pending.join(', ')}`, pending, waitingMs };
}

/** At this share of `maxmemory` the memory check says Redis is under pressure (still up). */
export const MEMORY_PRESSURE_RATIO = 0.9;

/**
 * Redis's memory (each server: a cluster's masters): down when a server is over `maxmemory` as Redis tests it
 * before a write (its replication and AOF buffers left out, `countedBytes`: it refuses writes, submits fail
 * with `RedisOutOfMemoryError`), up with a `pressure` message from `MEMORY_PRESSURE_RATIO` of it, and up
 * without a limit. Lists each server's used and maximum bytes.
 */
export function memoryHealth(servers: { node: string; usedBytes: number; maxBytes: number; policy: string; notCountedBytes?: number }[]): HealthCheckDetail {
  const ratio = (s: (typeof servers)[number]): number => (s.maxBytes > 0 ? countedBytes(s) / s.maxBytes : 0);
  const worst = servers.reduce<(typeof servers)[number] | undefined>((w, s) => (!w || ratio(s) > ratio(w) ? s : w), undefined);
  const detail = { servers: servers.map((s) => ({ ...s, usedRatio: Math.round(ratio(s) * 1000) / 1000 })) };
  if (!worst || worst.maxBytes === 0) return { status: 'up', ...detail };
  const percent = `${Math.round(ratio(worst) * 100)} % of maxmemory at ${worst.node}`;
  if (ratio(worst) >= 1) return { status: 'down', message: `out of memory: ${percent} (writes are refused)`, ...detail };
  if (ratio(worst) >= MEMORY_PRESSURE_RATIO) return { status: 'up', message: `memory pressure: ${percent}`, ...detail };
  return { status: 'up', ...detail };
}
