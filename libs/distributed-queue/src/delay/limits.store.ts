import type { LimitState, RateLimitOptions, TypeLimits } from '../interfaces';
import { decodeRateLimit, encodeRateLimit, type ConfiguredLimits } from '../options/resolve-limits';
import { delayQueueKeys } from '../redis/queue-keys';
import type { RedisClient } from '../redis/script-loader';

/** Overrides clear with this; '-' in Redis is "no limit" set by an operator. */
const NONE = '-';

type Arg = string | number;
interface LimitsScripts {
  dqDelayLimitsSet(...args: Arg[]): Promise<number>;
  dqDelayLimitsPause(...args: Arg[]): Promise<number>;
}

function state<T>(configured: T | null, raw: string | null, decode: (text: string) => T | null): LimitState<T> {
  const override = raw === null ? undefined : raw === NONE ? null : decode(raw);
  return { configured, override, effective: override === undefined ? configured : override };
}

/**
 * The limits of delay-queue types (fleet-wide concurrency and rate limit) in each type's limits hash, read
 * by the reserve script (`includes/admission.lua`). Every change wakes the type's workers.
 */
export class LimitsStore {
  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
  ) {}

  /** Writes what a worker's options configure (and removes what they do not): at the worker's start. */
  async configure(type: string, { rateLimit, globalConcurrency, defaultPriority, agingMs, groupConcurrency, groupRateLimit }: ConfiguredLimits): Promise<void> {
    await this.set(type, [
      'rl', rateLimit ? encodeRateLimit(rateLimit) : '', 'gc', globalConcurrency ? String(globalConcurrency) : '',
      'dp', defaultPriority ? String(defaultPriority) : '', 'ag', agingMs ? String(agingMs) : '',
      'gcc', groupConcurrency ? String(groupConcurrency) : '', 'grl', groupRateLimit ? encodeRateLimit(groupRateLimit) : '',
    ]);
  }

  /** An operator's rate limit (`null`: no limit whatever the options say). */
  async overrideRateLimit(type: string, limit: Required<RateLimitOptions> | null): Promise<void> {
    await this.set(type, ['rl!', limit ? encodeRateLimit(limit) : NONE]);
  }

  /** An operator's fleet-wide concurrency (`null`: none whatever the options say). */
  async overrideGlobalConcurrency(type: string, n: number | null): Promise<void> {
    await this.set(type, ['gc!', n === null ? NONE : String(n)]);
  }

  /** A handler met a rate limit of its own: the fleet starts nothing of the type for `ms`. */
  async pauseFor(type: string, ms: number): Promise<void> {
    await (this.client as unknown as LimitsScripts).dqDelayLimitsPause(delayQueueKeys(this.prefix, type).limits, ms);
  }

  /** Drops the operator's overrides: the options' limits hold again. */
  async reset(type: string): Promise<void> {
    await this.set(type, ['rl!', '', 'gc!', '']);
  }

  async read(type: string): Promise<TypeLimits> {
    const k = delayQueueKeys(this.prefix, type);
    const [fields, time] = await Promise.all([this.client.hmget(k.limits, 'rl', 'rl!', 'gc', 'gc!', 'until'), this.client.time()]);
    const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
    const running = await this.client.zcount(k.active, `(${now}`, '+inf');
    const count = (text: string): number | null => (/^\d+$/.test(text) ? Number(text) : null);
    return {
      rateLimit: state(decodeRateLimit(fields[0]), fields[1], decodeRateLimit),
      globalConcurrency: state(fields[2] === null ? null : count(fields[2]), fields[3], count),
      running,
      limitedUntil: fields[4] !== null && Number(fields[4]) > now ? Number(fields[4]) : null,
    };
  }

  private async set(type: string, pairs: string[]): Promise<void> {
    const k = delayQueueKeys(this.prefix, type);
    await (this.client as unknown as LimitsScripts).dqDelayLimitsSet(k.limits, k.events, ...pairs);
  }
}
