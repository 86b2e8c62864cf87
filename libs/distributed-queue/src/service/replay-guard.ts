import type { RedisClient } from '../redis/script-loader';
import type { ReplayGuard } from './delivery-runner';

/**
 * Delivery ids remembered in Redis (`SET NX PX`), so that a request replayed to any instance of the
 * application is refused.
 */
export function redisReplayGuard(redis: RedisClient, prefix: string, app: string): ReplayGuard {
  return {
    async firstSeen(delivery, forMs) {
      return (await redis.set(`${prefix}:{${prefix}:svc-seen}:${app}:${delivery}`, '1', 'PX', forMs, 'NX')) === 'OK';
    },
  };
}

/** Delivery ids remembered in this process (an application without a Redis connection), at most `max`. */
export function memoryReplayGuard(max = 100_000): ReplayGuard {
  const seen = new Map<string, number>();
  return {
    async firstSeen(delivery, forMs) {
      const now = Date.now();
      const until = seen.get(delivery);
      if (until !== undefined && until > now) return false;
      seen.delete(delivery);
      seen.set(delivery, now + forMs);
      // NOTE: oldest first in the map: drop expired ones, and the oldest past the bound.
      for (const [id, expires] of seen) {
        if (expires > now && seen.size <= max) break;
        seen.delete(id);
      }
      return true;
    },
  };
}
