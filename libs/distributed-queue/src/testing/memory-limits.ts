import type { DiscoveredWorker } from '../distributed-queue.explorer';
import { LimitsStore } from '../delay/limits.store';
import type { LimitState, RateLimitOptions, TypeLimits } from '../interfaces';
import type { ConfiguredLimits } from '../options/resolve-limits';
import { noRedis } from '../redis/no-redis';
import type { MemoryEngine } from './memory-engine';
import type { MemoryType } from './memory-type';

type RateLimit = Required<RateLimitOptions>;

interface TypeLimitState {
  /** The operator's overrides: undefined none, null "no limit". */
  rate?: RateLimit | null;
  concurrency?: number | null;
  /** GCRA's theoretical arrival time (ms, test clock). */
  tat: number;
}

function state<T>(configured: T | null, override: T | null | undefined): LimitState<T> {
  return { configured, override, effective: override === undefined ? configured : override };
}

/**
 * The fleet-wide limits of the testing module's delay-queue types, as the reserve script keeps them
 * (includes/admission.lua): the workers' `rateLimit` and `globalConcurrency`, the operator's overrides
 * (`QueueControlService.setRateLimit`, `setGlobalConcurrency`, `resetLimits`) and the rate limit as GCRA on
 * the test clock: each start moves the arrival time on by perMs / max; a start is allowed while
 * arrival - burst * T <= now.
 */
export class MemoryLimits extends LimitsStore {
  private readonly types = new Map<string, TypeLimitState>();

  constructor(
    private readonly engine: MemoryEngine,
    private readonly workerOf: (type: string) => DiscoveredWorker | undefined,
  ) {
    super(noRedis(), 'memory');
  }

  /** Forgets every override and rate limit's debt (`TestQueue.reset`). */
  clear(): void {
    this.types.clear();
  }

  /** Forgets one type's overrides and rate limit's debt (`obliterate`; the workers' options stay). */
  forget(type: string): void {
    this.types.delete(type);
  }

  private of(type: string): TypeLimitState {
    let limits = this.types.get(type);
    if (!limits) this.types.set(type, (limits = { tat: 0 }));
    return limits;
  }

  override async configure(_type: string, _limits: ConfiguredLimits): Promise<void> {
    // NOTE: read from the worker's options when needed: nothing to write
  }

  override async overrideRateLimit(type: string, limit: RateLimit | null): Promise<void> {
    Object.assign(this.of(type), { rate: limit, tat: 0 });
    this.engine.changed();
  }

  override async overrideGlobalConcurrency(type: string, n: number | null): Promise<void> {
    this.of(type).concurrency = n;
    this.engine.changed();
  }

  override async pauseFor(type: string, ms: number): Promise<void> {
    const queue = this.engine.type(type);
    queue.pausedUntil = Math.max(queue.pausedUntil, this.engine.clock.now() + ms);
  }

  override async reset(type: string): Promise<void> {
    const limits = this.of(type);
    delete limits.rate;
    delete limits.concurrency;
    limits.tat = 0;
    this.engine.changed();
  }

  override async read(type: string): Promise<TypeLimits> {
    const options = this.workerOf(type)?.options;
    const limits = this.of(type);
    const queue = this.engine.type(type);
    const until = queue.pausedUntil > this.engine.clock.now() ? queue.pausedUntil : null;
    return {
      rateLimit: state(options?.rateLimit ?? null, limits.rate),
      globalConcurrency: state(options?.globalConcurrency ?? null, limits.concurrency),
      running: queue.running().length,
      limitedUntil: until,
    };
  }

  /** How many more of the type's tasks may run now under its fleet-wide concurrency. */
  room(worker: DiscoveredWorker, queue: MemoryType): number {
    const limits = this.of(worker.type);
    const n = limits.concurrency === undefined ? worker.options.globalConcurrency : limits.concurrency;
    return n ? n - queue.running().length : Number.MAX_SAFE_INTEGER;
  }

  /** Whether one more start is allowed now by the rate limit; if so, it is charged. */
  take(worker: DiscoveredWorker, now: number): boolean {
    const rate = this.rateOf(worker);
    if (!rate) return true;
    const limits = this.of(worker.type);
    const t = rate.perMs / rate.max;
    const tat = Math.max(limits.tat, now);
    if (tat - rate.burst * t > now) return false;
    limits.tat = tat + t;
    return true;
  }

  /** When the rate limit lets the next start in (0: now or no limit). */
  nextStartAt(worker: DiscoveredWorker): number {
    const rate = this.rateOf(worker);
    if (!rate) return 0;
    return Math.ceil(this.of(worker.type).tat - rate.burst * (rate.perMs / rate.max));
  }

  private rateOf(worker: DiscoveredWorker): RateLimit | null {
    const limits = this.of(worker.type);
    return limits.rate === undefined ? (worker.options.rateLimit ?? null) : limits.rate;
  }
}
