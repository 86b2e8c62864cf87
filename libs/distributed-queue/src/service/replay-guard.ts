import type { RedisClient } from '../redis/script-loader';
import { DEFAULT_TOLERANCE_MS, verifyDelivery, type DeliveryRefusal } from './delivery-signature';

/** Remembers delivery ids for a while: `firstSeen` is true only the first time an id is offered. */
export interface ReplayGuard {
  firstSeen(delivery: string, forMs: number): Promise<boolean>;
}

/**
 * Authenticates a signed request (a delivery, or an application's call to the scheduler): the signature,
 * the timestamp within `toleranceMs`, and a delivery id not seen before (remembered for twice the
 * tolerance, as long as a timestamp stays acceptable). Resolves null when it passes, else why not.
 */
export async function authenticate(
  secret: string,
  replay: ReplayGuard,
  headers: Record<string, string | string[] | undefined>,
  rawBody: string,
  toleranceMs = DEFAULT_TOLERANCE_MS,
): Promise<DeliveryRefusal | 'replayed delivery' | null> {
  const verdict = verifyDelivery(secret, headers, rawBody, Date.now(), toleranceMs);
  if (!verdict.ok) return verdict.reason;
  return (await replay.firstSeen(verdict.delivery, 2 * toleranceMs)) ? null : 'replayed delivery';
}

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
