import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { DISTRIBUTED_QUEUE_RESOLVED_OPTIONS } from '../distributed-queue.constants';
import { InvalidArgumentError, ResultNotKeptError, ShutdownError, TaskCancelledError, TaskDeadError, TaskNotFoundError, WaitTimeoutError } from '../errors';
import { decodeStreamEntry } from '../events/stream-entry';
import type { WaitOptions } from '../interfaces';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { reportFailure } from '../redis/outage-log';
import { readResult } from '../runtime/result-text';
import { EventSubscriber } from '../runtime/event-subscriber';
import { DelayQueueStore } from './delay-queue.store';
import { decodeError } from './task-codec';

/** How long a type's waiters' flag lives in Redis, and how often it is raised again while they wait. */
const FLAG_TTL_MS = 30_000;
const FLAG_EVERY_MS = 10_000;
/** A type nobody waits on keeps its subscription this long, for the next waiter to start at once. */
const IDLE_MS = 30_000;
/** The longest wait: a timer's limit (~24.8 days). */
const MAX_WAIT_MS = 2_147_483_647;

interface Waiter {
  settle(outcome: { value: unknown } | { error: unknown }): void;
}

interface TypeWaiters {
  byId: Map<string, Set<Waiter>>;
  /** Subscribed and the flag raised: from then on no end of the type's tasks is missed. */
  ready: Promise<void>;
  refresh?: NodeJS.Timeout;
  idle?: NodeJS.Timeout;
}

/**
 * The waiters of this application (`TaskSubmitService.submitAndWait`, `waitFor`): per type, one channel
 * subscription and a flag in Redis (`<event stream>:aw`, holding the channel) that makes the scripts ending
 * tasks publish those ends (completed with results, dead with errors, cancelled; see awaiting.lua). A waiter
 * registers, waits until the type's subscription and flag are in place, and only then submits or reads the
 * task's state: an end cannot fall between. After the subscriber reconnects, every waiter reads its task's
 * state again (an end published while it was away is not missed). Nobody waiting costs nothing: no flag, no
 * publish, no subscription (after `IDLE_MS`).
 */
@Injectable()
export class TaskWaiters implements OnApplicationShutdown {
  private readonly types = new Map<string, TypeWaiters>();
  private readonly logger = new Logger('DistributedQueue');
  private removeHook?: () => void;
  private closed = false;

  constructor(
    private readonly store: DelayQueueStore,
    private readonly subscriber: EventSubscriber,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
  ) {}

  /**
   * Resolves with the result of task `id` of `type` once it completed (undefined when it returned nothing);
   * rejects with `TaskDeadError`, `TaskCancelledError`, `TaskNotFoundError`, `ResultNotKeptError`,
   * `WaitTimeoutError` or the signal's reason. `submit` (submitAndWait) runs once the waiter is in place and
   * answers whether it created the task (an existing one's state is read then).
   */
  async wait(type: string, id: string, options: WaitOptions = {}, submit?: () => Promise<boolean>): Promise<unknown> {
    const { timeoutMs, signal } = checkWaitOptions(options);
    signal?.throwIfAborted();
    if (this.closed) throw new ShutdownError();
    const entry = this.entry(type);
    return new Promise<unknown>((resolve, reject) => {
      let settled = false;
      const waiter: Waiter = {
        settle: (outcome) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          this.remove(type, id, waiter);
          if ('error' in outcome) reject(outcome.error);
          else resolve(outcome.value);
        },
      };
      const timer = setTimeout(() => waiter.settle({ error: new WaitTimeoutError(type, id, timeoutMs) }), timeoutMs);
      const onAbort = (): void => waiter.settle({ error: signal!.reason });
      signal?.addEventListener('abort', onAbort, { once: true });
      let set = entry.byId.get(id);
      if (!set) entry.byId.set(id, (set = new Set()));
      set.add(waiter);
      clearTimeout(entry.idle);
      entry.ready
        .then(async () => {
          const created = submit ? await submit() : false;
          if (!created && !settled) await this.check(type, id, waiter);
        })
        .catch((error: unknown) => waiter.settle({ error }));
    });
  }

  onApplicationShutdown(): void {
    this.closed = true;
    this.removeHook?.();
    for (const [type, entry] of this.types) {
      for (const set of entry.byId.values()) for (const waiter of set) waiter.settle({ error: new ShutdownError() });
      this.drop(type, entry);
    }
  }

  /** The type's waiters, subscribed and flagged on first use. */
  private entry(type: string): TypeWaiters {
    const known = this.types.get(type);
    if (known) return known;
    const channel = waitersChannel(this.options.keyPrefix, type);
    const entry: TypeWaiters = { byId: new Map(), ready: Promise.resolve() };
    this.removeHook ??= this.subscriber.onReconnect(() => this.checkAll());
    entry.ready = this.subscriber
      .subscribe(channel, (message) => this.onMessage(type, message))
      .then(() => this.store.raiseWaitersFlag(type, channel, FLAG_TTL_MS));
    // NOTE: a failed start is not kept: the next waiter tries again
    entry.ready.catch(() => this.types.get(type) === entry && this.drop(type, entry));
    entry.refresh = setInterval(() => {
      this.store.raiseWaitersFlag(type, channel, FLAG_TTL_MS).catch((error: unknown) => reportFailure(this.logger, 'raising the waiters flag', error));
    }, FLAG_EVERY_MS);
    entry.refresh.unref();
    this.types.set(type, entry);
    return entry;
  }

  private remove(type: string, id: string, waiter: Waiter): void {
    const entry = this.types.get(type);
    const set = entry?.byId.get(id);
    if (!entry || !set) return;
    set.delete(waiter);
    if (set.size === 0) entry.byId.delete(id);
    if (entry.byId.size === 0 && !this.closed) {
      clearTimeout(entry.idle);
      entry.idle = setTimeout(() => entry.byId.size === 0 && this.drop(type, entry), IDLE_MS);
      entry.idle.unref();
    }
  }

  private drop(type: string, entry: TypeWaiters): void {
    clearInterval(entry.refresh);
    clearTimeout(entry.idle);
    if (this.types.get(type) === entry) this.types.delete(type);
    void this.subscriber.unsubscribe(waitersChannel(this.options.keyPrefix, type)).catch(() => undefined);
  }

  /** An end published by a script: `[event, fields]` as a stream entry's (see awaiting.lua). */
  private onMessage(type: string, message: string): void {
    const entry = this.types.get(type);
    if (!entry) return;
    let parsed: [string, string[]];
    try {
      parsed = JSON.parse(message) as [string, string[]];
    } catch {
      return;
    }
    for (const ended of decodeStreamEntry(['0-0', ['e', parsed[0], ...parsed[1]]], { type })) {
      const set = entry.byId.get(ended.id);
      if (!set) continue;
      let outcome: { value: unknown } | { error: unknown };
      if (ended.event === 'completed') outcome = this.outcomeOf(type, ended.id, ended.result);
      else if (ended.event === 'dead') {
        const error = { name: ended.error?.name ?? 'Error', message: ended.error?.message ?? '', attempts: ended.attempt ?? 0, failedAt: ended.at };
        outcome = { error: new TaskDeadError(type, ended.id, ended.error?.stack ? { ...error, stack: ended.error.stack } : error) };
      } else if (ended.event === 'cancelled') outcome = { error: new TaskCancelledError(ended.id) };
      else continue;
      for (const waiter of [...set]) waiter.settle(outcome);
    }
  }

  /** Reads the task's state once: settles the waiter when the task ended (or never was). */
  private async check(type: string, id: string, waiter: Waiter): Promise<void> {
    const { state, error, result } = await this.store.get(type, id);
    if (state === 'done') waiter.settle(this.outcomeOf(type, id, result));
    else if (state === 'dead') waiter.settle({ error: new TaskDeadError(type, id, decodeError(error) ?? { name: 'Error', message: '', attempts: 0, failedAt: 0 }) });
    else if (state === 'unknown') waiter.settle({ error: new TaskNotFoundError(type, id) });
  }

  /**
   * After a reconnect: each type's flag is raised again (Redis may have restarted without it), then every
   * waiter reads its task's state again (an end published while the subscriber was away is not missed).
   */
  private checkAll(): void {
    for (const [type, entry] of this.types) {
      void this.store
        .raiseWaitersFlag(type, waitersChannel(this.options.keyPrefix, type), FLAG_TTL_MS)
        .then(async () => {
          for (const [id, set] of entry.byId) for (const waiter of set) await this.check(type, id, waiter);
        })
        .catch((error: unknown) => reportFailure(this.logger, 'reading the waited tasks again', error));
    }
  }

  private outcomeOf(type: string, id: string, text: string | null | undefined): { value: unknown } | { error: unknown } {
    const read = readResult(text);
    return 'notKept' in read ? { error: new ResultNotKeptError(type, id, read.notKept) } : read;
  }
}

/** The channel a type's waiters hear its tasks' ends on (type names hold no braces: no type's channel is this). */
export function waitersChannel(prefix: string, type: string): string {
  return `${prefix}:events:{done}:${type}`;
}

function checkWaitOptions(options: WaitOptions): { timeoutMs: number; signal?: AbortSignal } {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options', 'expected { timeoutMs?, signal? }');
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_WAIT_MS) {
    throw new InvalidArgumentError('timeoutMs', `expected a whole number of ms from 1 to ${MAX_WAIT_MS}`);
  }
  const { signal } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new InvalidArgumentError('signal', 'expected an AbortSignal');
  return signal ? { timeoutMs, signal } : { timeoutMs };
}
