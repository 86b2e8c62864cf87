import type { LoggerService } from '@nestjs/common';
import type { ResolvedWorkerOptions } from '../options/resolve-options';
import { configuresLimits } from '../options/resolve-limits';
import { reportFailure } from '../redis/outage-log';
import type { ConsumerFlows } from './consumer-flows';
import type { DelayQueueStore } from './delay-queue.store';
import type { Held } from './reserved-queue';

/** How often a delay consumer renews its leases: a third of the visibility timeout. */
export function renewEveryMs(options: ResolvedWorkerOptions): number {
  return Math.max(50, Math.floor(options.visibilityTimeoutMs / 3));
}

/**
 * One lease-renewal tick of a delay consumer: records it as live, writes its type's limits again, sweeps its
 * flows' dead nodes, and renews the leases of `held`. Resolves with the ids whose lease was lost, or null when
 * nothing is held or the renewal failed (reported).
 */
export async function renewTick(
  type: string, consumerId: string, options: ResolvedWorkerOptions, store: DelayQueueStore, flows: ConsumerFlows | undefined, logger: LoggerService, held: Held[],
): Promise<string[] | null> {
  // NOTE: live for two renewal periods and a second: a missed tick or a slow reply does not look like a stop.
  void store.touchPresence(type, consumerId, 2 * renewEveryMs(options) + 1000).catch(() => undefined);
  // NOTE: written again each tick (a change only when missing): Redis may have come back without them.
  if (configuresLimits(options)) void store.limits.configure(type, options).catch(() => undefined);
  flows?.sweep();
  if (held.length === 0) return null;
  try {
    return await store.extend(type, options.visibilityTimeoutMs, held);
  } catch (error) {
    reportFailure(logger, `[${type}] lease renewal`, error);
    return null;
  }
}
