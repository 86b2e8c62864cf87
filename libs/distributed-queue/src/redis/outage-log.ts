import type { LoggerService } from '@nestjs/common';
import { RedisOutOfMemoryError, RedisUnavailableError } from '../errors';
import { FailureTally, seconds } from './failure-tally';

/** Where connection trouble is reported: a Nest `Logger` or any `LoggerService`. */
export type ConnectionLogger = Pick<LoggerService, 'log' | 'warn'>;

/** While a connection stays down, a summary of the calls that failed meanwhile at most this often. */
export const OUTAGE_SUMMARY_MS = 5 * 60_000;
/** While a connection is down by timeouts only (a paused server), it is probed this often. */
export const PROBE_MS = 2000;

/**
 * Where the library's calls that failed by a connection's trouble are counted instead of logged one by one:
 * its outages (`OutageLog`) and its server's running out of memory (`MemoryLog`).
 */
export interface FailureLog {
  /** A call of the library failed by this trouble: counted by `what` (the trouble's first one is logged). */
  failure(what: string, error: Error): void;
  /** A failure reported after the call (see `countedInOutage`): counted, or already reported, or not of this log. */
  lateFailure(what: string, failedAt: number, error: Error): boolean;
}

/**
 * Where a `RedisUnavailableError` or `RedisOutOfMemoryError` keeps the log of its connection's trouble (not
 * enumerable, not printed).
 */
const OUTAGE = Symbol('outage');

/** When a tagged error happened (ms since the epoch; not enumerable). */
const FAILED_AT = Symbol('failedAt');

/** Ties `error` to the log of the trouble of the connection it failed on, for `reportFailure`. */
export function tagOutage<E extends Error>(error: E, outage: FailureLog | undefined): E {
  if (outage) {
    Object.defineProperty(error, OUTAGE, { value: outage, enumerable: false });
    Object.defineProperty(error, FAILED_AT, { value: Date.now(), enumerable: false });
  }
  return error;
}

/** The log `error` is tied to, when it is a `RedisUnavailableError` or `RedisOutOfMemoryError` of one of the library's connections. */
const outageOf = (error: unknown): FailureLog | undefined =>
  error instanceof RedisUnavailableError || error instanceof RedisOutOfMemoryError ? (error as unknown as Record<symbol, FailureLog | undefined>)[OUTAGE] : undefined;

/**
 * One connection's outages, logged once each: one warning when it is lost (its first connection error, or
 * the first call that timed out on a server that stopped answering), one line when it is back, and while
 * it stays down a summary at most every `OUTAGE_SUMMARY_MS`. The failures of the library's own calls
 * meanwhile are counted (`reportFailure`), not logged one by one. A cluster client has a scope per node
 * besides its own, as a cluster stays ready while one of its nodes is down.
 */
export class OutageLog implements FailureLog {
  private readonly down = new Map<string, number>();
  /** When the connection was last ready again after an outage (0: never lost). */
  private backAt = 0;
  private readonly failed = new FailureTally();
  private summaryTimer?: NodeJS.Timeout;
  private probeTimer?: NodeJS.Timeout;
  private probing = false;

  constructor(
    private readonly logger: ConnectionLogger,
    readonly name: string,
    /** Sends a PING: resolves when the server answers (used while it is down by timeouts only). */
    private readonly probe: () => Promise<unknown>,
    /** True once the application shuts down: a connection lost then is not an outage to report. */
    private readonly closing: () => boolean = () => false,
  ) {}

  /** The connection is known to be down: lost, and not ready again since. */
  get isDown(): boolean {
    return this.down.has('');
  }

  /** A connection error (ioredis emits one per reconnect attempt). */
  error(scope: string, error: Error): void {
    this.lost(scope, error.message);
  }

  /** The connection (or the node `scope`) is ready again. */
  ready(scope: string): void {
    const since = this.down.get(scope);
    if (since === undefined) return;
    this.down.delete(scope);
    if (scope === '') this.backAt = Date.now();
    const failed = this.down.size === 0 ? this.failed.take() : '';
    this.logger.log(`Redis connection ${this.where(scope)} reconnected after ${seconds(Date.now() - since)}${failed}`);
    if (this.down.size === 0) this.stopTimers();
  }

  /** A call of the library failed because this connection is unavailable: counted by `what`. */
  failure(what: string, error: Error): void {
    this.failed.add(what);
    if (this.down.has('')) return;
    this.lost('', error instanceof RedisUnavailableError ? error.reason : error.message);
    // NOTE: no connection error comes from a server that stopped answering: find out when it answers again.
    this.probeTimer ??= setInterval(() => this.probeOnce(), PROBE_MS);
    this.probeTimer.unref();
  }

  /**
   * A failure that happened during an outage, reported later (a task's attempt that failed by it, recorded
   * once Redis answered): counted while the connection is still down, dropped when the line saying it is back
   * was already written (that outage is reported); false when it is not of an outage this log knows of.
   */
  lateFailure(what: string, failedAt: number): boolean {
    if (this.down.has('')) {
      this.failed.add(what);
      return true;
    }
    return failedAt <= this.backAt;
  }

  private probeOnce(): void {
    if (this.probing) return;
    this.probing = true;
    this.probe().then(
      () => this.ready(''),
      () => undefined,
    ).finally(() => (this.probing = false));
  }

  /** The connection is closed for good (shutdown): nothing more to report. */
  end(): void {
    this.stopTimers();
  }

  private lost(scope: string, reason: string): void {
    if (this.down.has(scope) || this.closing()) return;
    this.down.set(scope, Date.now());
    this.logger.warn(`Redis connection ${this.where(scope)} failed: ${reason}; reconnecting (logged once per outage)`);
    this.summaryTimer ??= setInterval(() => this.summary(), OUTAGE_SUMMARY_MS);
    this.summaryTimer.unref();
  }

  private summary(): void {
    const since = Math.min(...this.down.values());
    if (!Number.isFinite(since)) return;
    this.logger.warn(`Redis connection ${this.name} still down after ${seconds(Date.now() - since)}${this.failed.take()}`);
  }

  private stopTimers(): void {
    clearInterval(this.summaryTimer);
    clearInterval(this.probeTimer);
    this.summaryTimer = this.probeTimer = undefined;
  }

  private where(scope: string): string {
    return scope ? `${this.name} (${scope})` : this.name;
  }
}

/**
 * Reports a failed call of the library's own (a fetch, a heartbeat, a renewal...): when Redis is
 * unavailable, the connection's outage log counts it (one warning per outage says so), when it is out of
 * memory its memory log (one warning while it lasts); anything else is logged as `message` (which should name
 * `what` and the error) at warn.
 */
export function reportFailure(logger: Pick<LoggerService, 'warn'>, what: string, error: unknown, message?: string): void {
  const outage = outageOf(error);
  if (outage) return outage.failure(what, error as Error);
  logger.warn(message ?? `${what} failed: ${error instanceof Error ? error.message : String(error)}`);
}

/**
 * True when `error`, a failure reported after the call that failed (a task's handler rejected with the
 * library's `RedisUnavailableError` or `RedisOutOfMemoryError`, and its attempt was recorded since), belongs
 * to an outage (or a time out of memory) of one of the library's connections: counted in that outage's lines (or already reported by them), not to be logged
 * on its own. False for any other error.
 */
export function countedInOutage(what: string, error: unknown): boolean {
  const outage = outageOf(error);
  return outage !== undefined && outage.lateFailure(what, (error as unknown as Record<symbol, number>)[FAILED_AT], error as Error);
}
