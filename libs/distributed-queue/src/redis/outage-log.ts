import type { LoggerService } from '@nestjs/common';
import { RedisUnavailableError } from '../errors';

/** Where connection trouble is reported: a Nest `Logger` or any `LoggerService`. */
export type ConnectionLogger = Pick<LoggerService, 'log' | 'warn'>;

/** While a connection stays down, a summary of the calls that failed meanwhile at most this often. */
export const OUTAGE_SUMMARY_MS = 5 * 60_000;
/** While a connection is down by timeouts only (a paused server), it is probed this often. */
export const PROBE_MS = 2000;

/** Where a `RedisUnavailableError` keeps the outage log of its connection (not enumerable, not printed). */
const OUTAGE = Symbol('outage');

/** When a tagged error happened (ms since the epoch; not enumerable). */
const FAILED_AT = Symbol('failedAt');

/** Ties `error` to the outage log of the connection it failed on, for `reportFailure`. */
export function tagOutage<E extends Error>(error: E, outage: OutageLog | undefined): E {
  if (outage) {
    Object.defineProperty(error, OUTAGE, { value: outage, enumerable: false });
    Object.defineProperty(error, FAILED_AT, { value: Date.now(), enumerable: false });
  }
  return error;
}

/** The outage log `error` is tied to, when it is a `RedisUnavailableError` of one of the library's connections. */
const outageOf = (error: unknown): OutageLog | undefined =>
  error instanceof RedisUnavailableError ? (error as unknown as Record<symbol, OutageLog | undefined>)[OUTAGE] : undefined;

const seconds = (ms: number): string => (ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`);

/**
 * One connection's outages, logged once each: one warning when it is lost (its first connection error, or
 * the first call that timed out on a server that stopped answering), one line when it is back, and while
 * it stays down a summary at most every `OUTAGE_SUMMARY_MS`. The failures of the library's own calls
 * meanwhile are counted (`reportFailure`), not logged one by one. A cluster client has a scope per node
 * besides its own, as a cluster stays ready while one of its nodes is down.
 */
export class OutageLog {
  private readonly down = new Map<string, number>();
  /** When the connection was last ready again after an outage (0: never lost). */
  private backAt = 0;
  private failed = new Map<string, number>();
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
    const failed = this.down.size === 0 ? this.takeFailures() : '';
    this.logger.log(`Redis connection ${this.where(scope)} reconnected after ${seconds(Date.now() - since)}${failed}`);
    if (this.down.size === 0) this.stopTimers();
  }

  /** A call of the library failed because this connection is unavailable: counted by `what`. */
  failure(what: string, error: RedisUnavailableError): void {
    this.failed.set(what, (this.failed.get(what) ?? 0) + 1);
    if (this.down.has('')) return;
    this.lost('', error.reason);
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
      this.failed.set(what, (this.failed.get(what) ?? 0) + 1);
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
    this.logger.warn(`Redis connection ${this.name} still down after ${seconds(Date.now() - since)}${this.takeFailures()}`);
  }

  /** `; N calls failed meanwhile (fetch ×3, …)`, or '' when none did; starts counting anew. */
  private takeFailures(): string {
    const failed = this.failed;
    this.failed = new Map();
    let total = 0;
    for (const count of failed.values()) total += count;
    if (total === 0) return '';
    const kinds = [...failed].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([what, n]) => `${what} ×${n}`);
    return `; ${total} call(s) of the library failed meanwhile (${kinds.join(', ')}${failed.size > 6 ? ', …' : ''})`;
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
 * unavailable, the connection's outage log counts it (one warning per outage says so); anything else is
 * logged as `message` (which should name `what` and the error) at warn.
 */
export function reportFailure(logger: Pick<LoggerService, 'warn'>, what: string, error: unknown, message?: string): void {
  const outage = outageOf(error);
  if (outage) return outage.failure(what, error as RedisUnavailableError);
  logger.warn(message ?? `${what} failed: ${error instanceof Error ? error.message : String(error)}`);
}

/**
 * True when `error`, a failure reported after the call that failed (a task's handler rejected with the
 * library's `RedisUnavailableError`, and its attempt was recorded since), belongs to an outage of one of the
 * library's connections: counted in that outage's lines (or already reported by them), not to be logged
 * on its own. False for any other error.
 */
export function countedInOutage(what: string, error: unknown): boolean {
  const outage = outageOf(error);
  return outage !== undefined && outage.lateFailure(what, (error as unknown as Record<symbol, number>)[FAILED_AT]);
}
