import type { RedisOutOfMemoryError } from '../errors';
import { FailureTally, seconds } from './failure-tally';
import { OUTAGE_SUMMARY_MS, PROBE_MS, type ConnectionLogger, type FailureLog } from './outage-log';

/**
 * A connection's server out of memory (at `maxmemory`, policy `noeviction`: it refuses writes), logged once
 * while it lasts: one warning at the first of the library's calls refused, one line once the server is under
 * its limit again (read every `PROBE_MS` while it is not) counting the calls refused meanwhile, and while it
 * lasts a summary at most every `OUTAGE_SUMMARY_MS`. Before, each periodic call (heartbeats, renewals,
 * rebalances, takes, the cron's ticks) warned on its own: a dozen lines a second.
 */
export class MemoryLog implements FailureLog {
  /** When the first refusal of this time out of memory came (undefined: not out of memory). */
  private since?: number;
  /** When the server was last seen under its limit again (0: never out of memory). */
  private backAt = 0;
  private readonly failed = new FailureTally();
  private probeTimer?: NodeJS.Timeout;
  private summaryTimer?: NodeJS.Timeout;
  private probing = false;
  private lastRefusedAt = 0;

  constructor(
    private readonly logger: ConnectionLogger,
    /** The library's name of the connection. */
    readonly name: string,
    /** Where it connects (never its password). */
    private readonly target: string,
    /**
     * Reads the server's memory: true while it is over `maxmemory` (any master of a cluster); undefined when
     * it cannot be read (a user not allowed INFO): then the time ends once no call was refused for two probes.
     */
    private readonly overLimit: () => Promise<boolean | undefined>,
    /** True once the application shuts down. */
    private readonly closing: () => boolean = () => false,
  ) {}

  failure(what: string, error: Error): void {
    this.failed.add(what);
    this.lastRefusedAt = Date.now();
    if (this.since !== undefined || this.closing()) return;
    this.since = Date.now();
    const reply = (error as RedisOutOfMemoryError).reply ?? error.message;
    this.logger.warn(
      `Redis at ${this.target} is out of memory (connection ${this.name}): it refuses the library's writes (${reply.split('\n')[0].slice(0, 120)}); ` +
        'logged once while it lasts, the health indicator\'s memory check says it too. Free memory: raise maxmemory, drain or purge queues',
    );
    this.probeTimer = setInterval(() => this.probeOnce(), PROBE_MS);
    this.probeTimer.unref();
    this.summaryTimer = setInterval(() => this.summary(), OUTAGE_SUMMARY_MS);
    this.summaryTimer.unref();
  }

  lateFailure(what: string, failedAt: number, error: Error): boolean {
    if (this.since !== undefined) {
      this.failed.add(what);
      return true;
    }
    if (failedAt <= this.backAt) return true;
    // NOTE: the first refusal of this time may be a handler's call (a cron tick's submit), reported once its
    // attempt was recorded: it begins the time out of memory as the library's own calls do.
    this.failure(what, error);
    return true;
  }

  /** The connection is closed for good (shutdown): nothing more to report. */
  end(): void {
    this.stopTimers();
  }

  private probeOnce(): void {
    if (this.probing) return;
    this.probing = true;
    this.overLimit().then(
      (over) => void ((over === false || (over === undefined && Date.now() - this.lastRefusedAt > 2 * PROBE_MS)) && this.back()),
      () => undefined,
    ).finally(() => (this.probing = false));
  }

  private back(): void {
    if (this.since === undefined) return;
    const since = this.since;
    this.since = undefined;
    this.backAt = Date.now();
    this.stopTimers();
    this.logger.log(`Redis at ${this.target} accepts writes again (connection ${this.name}) after ${seconds(this.backAt - since)}${this.failed.take()}`);
  }

  private summary(): void {
    if (this.since === undefined) return;
    this.logger.warn(`Redis at ${this.target} still out of memory (connection ${this.name}) after ${seconds(Date.now() - this.since)}${this.failed.take()}`);
  }

  private stopTimers(): void {
    clearInterval(this.probeTimer);
    clearInterval(this.summaryTimer);
    this.probeTimer = this.summaryTimer = undefined;
  }
}
