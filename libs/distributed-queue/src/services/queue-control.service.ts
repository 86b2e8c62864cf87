import { Inject, Injectable } from '@nestjs/common';
import { checkedTypeOf, type TaskContract } from '../contracts/task-contract';
import { DelayCleaningStore } from '../delay/delay-cleaning.store';
import { DelayQueueStore } from '../delay/delay-queue.store';
import { DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, routeDelayType } from '../distributed-queue.constants';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { InvalidArgumentError, InvalidOptionsError, QueueInUseError, RouteNotConfiguredError, UnknownTaskTypeError } from '../errors';
import type { ObliterateOptions, PurgeDeadOptions, RateLimitOptions, TypeLimits } from '../interfaces';
import { checkRateLimit, MAX_GLOBAL_CONCURRENCY, resolveRateLimit } from '../options/resolve-limits';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { RouteControlStore } from '../route/route-control.store';
import { isOrderedType } from './type-kind';

/** Tasks or dead letters one cleaning script call removes: bounds the time it holds Redis. */
const CLEAN_BATCH = 1000;
/** Partitions acted on at once. */
const PARTITIONS_AT_ONCE = 16;

type AnyType = string | TaskContract<unknown, boolean>;

/** Calls `step` until it does less than a full batch; returns the sum of what it did. */
async function inBatches(step: () => Promise<number>): Promise<number> {
  let total = 0;
  let n: number;
  do {
    n = await step();
    total += n;
  } while (n >= CLEAN_BATCH);
  return total;
}

/** Runs an option check on a call's argument: its failure is an `InvalidArgumentError`. */
export function asArgument(check: () => void): void {
  try {
    check();
  } catch (error) {
    if (!(error instanceof InvalidOptionsError)) throw error;
    throw new InvalidArgumentError(error.option, error.message.replace(/^Invalid distributed-queue option "[^"]*": /, ''));
  }
}

/** Runs `fn` for every partition, a few at a time; returns the sum of the results. */
async function eachPartition(control: RouteControlStore, fn: (partition: number) => Promise<number | void>): Promise<number> {
  const n = await control.partitions();
  let total = 0;
  for (let from = 0; from < n; from += PARTITIONS_AT_ONCE) {
    const partitions = Array.from({ length: Math.min(PARTITIONS_AT_ONCE, n - from) }, (_, i) => from + i);
    for (const result of await Promise.all(partitions.map(fn))) total += result ?? 0;
  }
  return total;
}

/**
 * Steers the queues for the whole fleet: pause and resume, and cleaning (drain, purge dead letters,
 * obliterate). Injectable anywhere. Every method returns a promise and reports bad input by rejecting it.
 *
 * An ordered type stands for its route queue: all ordered types of the queue share its partitions, so each
 * call acts on the whole route queue (every ordered type of it) and its delayed ordered tasks.
 */
@Injectable()
export class QueueControlService {
  /** @internal Nest creates it (dependency injection): inject the class, do not construct it. */
  constructor(
    private readonly store: DelayQueueStore,
    private readonly cleaning: DelayCleaningStore,
    private readonly explorer: DistributedQueueExplorer,
    @Inject(RouteControlStore) private readonly routeControl: RouteControlStore | null,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
  ) {}

  /**
   * Pauses a type in Redis: every instance stops starting its tasks at its next fetch (within one poll
   * interval); running tasks finish; submits, cancels and reschedules go on; the pause survives restarts.
   *
   * An ordered type pauses its whole route queue (a flag in every partition's record): each owner stops
   * starting tasks at once (a message) or at its next take, even in the middle of a batch; running tasks
   * finish and are acked; what was not started stays in flight and runs in order after the resume, without
   * counting as a replay or an attempt. A new owner of a partition (after a restart) finds it paused too.
   * Partitions added by growing the partition count later are not paused.
   * @throws InvalidTaskTypeError; RouteNotConfiguredError for an ordered type without the `route` option
   */
  async pause(type: AnyType): Promise<void> {
    await this.setPaused(type, true);
  }

  /** Resumes a paused type (an ordered type: its route queue) and wakes its workers at once. */
  async resume(type: AnyType): Promise<void> {
    await this.setPaused(type, false);
  }

  /** Whether a type is paused; for an ordered type, whether its route queue is (any partition of it). */
  async isPaused(type: AnyType): Promise<boolean> {
    const name = checkedTypeOf(type);
    if (!isOrderedType(this.explorer, type)) return this.store.isPaused(name);
    const control = this.route('isPaused()');
    return (await eachPartition(control, async (p) => ((await control.isPaused(p)) ? 1 : 0))) > 0;
  }

  /**
   * Removes the type's waiting tasks, delayed and ready, with their records; running tasks are never
   * touched and finish as usual. Works in batches of 1000 per script call until nothing is left (tasks
   * submitted meanwhile may be removed too). For an ordered type: every partition's waiting tasks and the
   * route queue's delayed ordered tasks. Returns how many were removed.
   * @throws InvalidTaskTypeError, UnknownTaskTypeError (strictTypes), RouteNotConfiguredError
   */
  async drain(type: AnyType): Promise<number> {
    const name = this.cleanedType(type);
    if (!isOrderedType(this.explorer, type)) return inBatches(() => this.cleaning.drain(name, CLEAN_BATCH));
    const control = this.route('drain()');
    const delayed = await inBatches(() => this.cleaning.drain(routeDelayType(control.route.options.qId), CLEAN_BATCH));
    return delayed + (await eachPartition(control, (p) => inBatches(() => control.drain(p, CLEAN_BATCH))));
  }

  /**
   * Deletes the type's dead letters that died `olderThanMs` ago or earlier (Redis clock), oldest first, in
   * batches of 1000 per script call. For an ordered type: the route queue's dead letters (every ordered
   * type of it) and those of its delayed ordered tasks. Returns how many were deleted.
   * @throws InvalidArgumentError for a bad `olderThanMs`; InvalidTaskTypeError, UnknownTaskTypeError
   * (strictTypes), RouteNotConfiguredError
   */
  async purgeDead(type: AnyType, options: PurgeDeadOptions = {}): Promise<number> {
    const name = this.cleanedType(type);
    const { olderThanMs = 0 } = options ?? {};
    if (typeof olderThanMs !== 'number' || !Number.isFinite(olderThanMs) || olderThanMs < 0) {
      throw new InvalidArgumentError('olderThanMs', `must be a number of ms from 0, got ${String(olderThanMs)}`);
    }
    const age = Math.floor(olderThanMs);
    if (!isOrderedType(this.explorer, type)) return inBatches(() => this.cleaning.purgeDead(name, age, CLEAN_BATCH));
    const control = this.route('purgeDead()');
    const delayed = await inBatches(() => this.cleaning.purgeDead(routeDelayType(control.route.options.qId), age, CLEAN_BATCH));
    return delayed + (await eachPartition(control, (p) => inBatches(() => control.purgeDead(p, age, CLEAN_BATCH))));
  }

  /**
   * Removes everything of a type: waiting, running records, dead letters, done ids, errors, its sequence,
   * pause flag and event stream (request keys expire on their own). Big keys are deleted with UNLINK, which
   * frees them in the background. Refused while consumers of the type are live (they record their presence
   * with each lease renewal and leave it when they stop) unless `force`.
   *
   * An ordered type obliterates its whole route queue (every ordered type of it): each partition's waiting,
   * in-flight and dead tasks, event stream and pause flag, and the delayed ordered tasks; the membership and
   * each partition's ownership record and sequence stay. Refused while machines of the queue are live (a
   * heartbeat younger than `offlineMs`) unless `force`.
   * @throws QueueInUseError; InvalidArgumentError for a bad `force`; InvalidTaskTypeError,
   * UnknownTaskTypeError (strictTypes), RouteNotConfiguredError
   */
  async obliterate(type: AnyType, options: ObliterateOptions = {}): Promise<void> {
    const name = this.cleanedType(type);
    const { force = false } = options ?? {};
    if (typeof force !== 'boolean') throw new InvalidArgumentError('force', `must be a boolean, got ${String(force)}`);
    if (!isOrderedType(this.explorer, type)) {
      const live = force ? 0 : await this.cleaning.liveConsumers(name);
      if (live > 0) throw new QueueInUseError(`type "${name}"`, live, 'consumer(s)');
      await this.cleaning.obliterate(name);
      return;
    }
    const control = this.route('obliterate()');
    const { qId } = control.route.options;
    if (!force) {
      const [machines, movers] = await Promise.all([control.liveMachines(), this.cleaning.liveConsumers(routeDelayType(qId))]);
      // NOTE: the movers of delayed ordered tasks run on the machines: either count says the queue is in use.
      const live = Math.max(machines, movers);
      if (live > 0) throw new QueueInUseError(`route queue "${qId}" (of type "${name}")`, live, 'machine(s)');
    }
    await this.cleaning.obliterate(routeDelayType(qId));
    await eachPartition(control, (p) => control.obliterate(p));
  }

  /**
   * Sets a delay-queue type's fleet-wide rate limit at run time over what its workers' options say (`null`:
   * no limit): every instance keeps to it from its next reserve. Kept in Redis (restarts keep it) until
   * `resetLimits`. A changed limit starts afresh, without the old one's debt.
   * @throws InvalidArgumentError naming a bad field; InvalidTaskTypeError, UnknownTaskTypeError (strictTypes),
   * InvalidArgumentError for an ordered type
   */
  async setRateLimit(type: AnyType, limit: RateLimitOptions | null): Promise<void> {
    const name = this.limitedType(type, 'rateLimit');
    if (limit !== null) asArgument(() => checkRateLimit(limit, 'limit'));
    await this.store.limits.overrideRateLimit(name, limit === null ? null : resolveRateLimit(limit));
  }

  /**
   * Sets a delay-queue type's fleet-wide concurrency at run time over its workers' options (`null`: none):
   * from the next reserve of every instance, at most `n` of its tasks hold a lease at once. Kept in Redis
   * until `resetLimits`. Raising it wakes the workers at once.
   * @throws InvalidArgumentError for a bad `n` or an ordered type; InvalidTaskTypeError, UnknownTaskTypeError
   */
  async setGlobalConcurrency(type: AnyType, n: number | null): Promise<void> {
    const name = this.limitedType(type, 'globalConcurrency');
    if (n !== null && (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_GLOBAL_CONCURRENCY)) {
      throw new InvalidArgumentError('n', `must be an integer from 1 to ${MAX_GLOBAL_CONCURRENCY} or null, got ${String(n)}`);
    }
    await this.store.limits.overrideGlobalConcurrency(name, n);
  }

  /** Drops the run-time limits of `setRateLimit` and `setGlobalConcurrency`: the workers' options hold again. */
  async resetLimits(type: AnyType): Promise<void> {
    await this.store.limits.reset(this.limitedType(type, 'limits'));
  }

  /** A delay-queue type's limits: configured, overridden, in force; and its tasks holding a lease now. */
  async getLimits(type: AnyType): Promise<TypeLimits> {
    return this.store.limits.read(this.limitedType(type, 'limits'));
  }

  private limitedType(type: AnyType, what: string): string {
    const name = this.cleanedType(type);
    if (isOrderedType(this.explorer, type)) throw new InvalidArgumentError('type', `"${name}" is ordered: ${what} is for delay-queue types`);
    return name;
  }

  private async setPaused(type: AnyType, paused: boolean): Promise<void> {
    const name = checkedTypeOf(type);
    if (!isOrderedType(this.explorer, type)) return this.store.setPaused(name, paused);
    const control = this.route(paused ? 'pause()' : 'resume()');
    await eachPartition(control, (p) => control.setPaused(p, paused));
  }

  /** The checked type string of a cleaning call: under `strictTypes`, a type this application knows. */
  private cleanedType(type: AnyType): string {
    const name = checkedTypeOf(type);
    if (this.options.strictTypes && !this.explorer.isKnown(name)) throw new UnknownTaskTypeError(name);
    return name;
  }

  private route(call: string): RouteControlStore {
    if (!this.routeControl) throw new RouteNotConfiguredError(`${call} of an ordered type`);
    return this.routeControl;
  }
}
