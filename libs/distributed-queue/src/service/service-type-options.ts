import type { ResolvedWorkerOptions } from '../options/resolve-options';
import type { ServiceTypeOptions } from './service-registry';

/** What a client registers for a type: the options the scheduler runs its deliveries with. */
export function toServiceTypeOptions(options: ResolvedWorkerOptions, maxRequestBytes: number): ServiceTypeOptions {
  return { concurrency: options.concurrency, maxAttempts: options.maxAttempts, timeoutMs: options.timeoutMs, backoff: options.backoff, maxRequestBytes };
}
