import { Inject, Injectable, Logger } from '@nestjs/common';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS } from '../distributed-queue.constants';
import { RedisOutOfMemoryError, RedisStartupError, RedisUnavailableError } from '../errors';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { RedisConnections } from '../redis/redis-connections';
import type { RedisClient } from '../redis/script-loader';

/** The first wait before a step that could not reach Redis runs again; doubled up to `RETRY_MAX_MS`. */
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5000;

/** Where start-up stands: what `isHealthy` reports as `startup`. */
export interface StartupState {
  /** Every part of the library has started. */
  ready: boolean;
  /** The parts not started yet, in the order they start. */
  pending: string[];
  /** Since when the application waits (ms since the epoch). */
  since: number;
  /** Why it waits: the last connection error, or the error that stopped start-up. */
  reason?: string;
  /** A part failed for a reason other than Redis being away (e.g. a type owned elsewhere): start-up stopped. */
  failed?: string;
}

/**
 * Runs the start-up steps of the library's parts (workers, route queue, cron, event followers, history
 * writer, service mode). By default a step runs at once and its failure fails the application's start-up.
 * With `waitForRedis` the application starts without Redis: the steps run in turn in the background, each
 * once the commands connection is ready and again (after 0.25–5 s) when it could not reach Redis or Redis
 * refused it for want of memory, until every part has started or the application shuts down; a step failing
 * for another reason stops start-up (logged, and reported by the health indicator).
 */
@Injectable()
export class StartupSteps {
  private readonly logger = new Logger('DistributedQueue');
  private readonly pending: string[] = [];
  private readonly since = Date.now();
  private chain: Promise<void> = Promise.resolve();
  private stopping = false;
  private wake?: () => void;
  private reason?: string;
  private failed?: string;
  private announced = false;

  constructor(
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Inject(DISTRIBUTED_QUEUE_REDIS) private readonly redis: RedisClient,
    private readonly connections: RedisConnections,
  ) {
    if (!this.waits) return;
    // NOTE: a refused SELECT (a database index out of range) comes as an 'error' too: the reason shown.
    this.redis.on('error', (error: Error) => void (this.reason = error.message));
  }

  /** True when start-up does not wait for Redis (`waitForRedis`), and Redis is used at all. */
  get waits(): boolean {
    return this.options.waitForRedis && !this.options.service?.url;
  }

  /** Where start-up stands. */
  get state(): StartupState {
    return { ready: this.pending.length === 0 && !this.failed, pending: [...this.pending], since: this.since, reason: this.failed ?? this.reason, failed: this.failed };
  }

  /**
   * Runs the start-up step of `part`: now (a failure fails start-up), or with `waitForRedis` in the
   * background, after the steps registered before it. A step must be safe to run again after it failed
   * part-way (what it started, it keeps and does not start twice).
   */
  run(part: string, step: () => Promise<void>): Promise<void> {
    if (!this.waits) return step();
    if (!this.announced) {
      this.announced = true;
      if (this.redis.status !== 'ready') this.logger.warn(`Redis at ${this.connections.target} is not ready: starting without it (waitForRedis); the queues start once it answers`);
      this.enqueue('Redis server check', () => this.connections.checkServer(this.redis));
    }
    this.enqueue(part, step);
    return Promise.resolve();
  }

  private enqueue(part: string, step: () => Promise<void>): void {
    this.pending.push(part);
    this.chain = this.chain.then(() => this.retry(part, step));
  }

  /**
   * Shutdown began: no step starts any more; resolves once the step in progress (its calls bounded by
   * `redisTimeoutMs`) has settled. Every part calls this first in its own shutdown.
   */
  halt(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    return this.chain;
  }

  private async retry(part: string, step: () => Promise<void>): Promise<void> {
    for (let wait = RETRY_MIN_MS; !this.stopping && !this.failed; wait = Math.min(wait * 2, RETRY_MAX_MS)) {
      await this.whenReady();
      if (this.stopping) return;
      try {
        await step();
        this.pending.shift();
        if (this.pending.length === 0) this.logger.log(`Redis at ${this.connections.target} answers: every queue has started (${Math.round((Date.now() - this.since) / 1000)} s after start-up)`);
        return;
      } catch (error) {
        // NOTE: a server out of memory (it refuses writes) is waited for as one that does not answer: the step
        // runs again once memory is freed. It stopped start-up for good before: the route queue and the cron
        // never started, and ordered tasks submitted later never ran.
        if (!(error instanceof RedisUnavailableError) && !(error instanceof RedisStartupError) && !(error instanceof RedisOutOfMemoryError)) {
          this.failed = `${part} failed to start: ${(error as Error).message}`;
          this.logger.error(`${this.failed}; the parts after it stay stopped`, (error as Error).stack);
          return;
        }
        this.reason = error.message;
        await this.sleep(wait);
      }
    }
  }

  /** Resolves when the commands connection is ready, or shutdown began. */
  private whenReady(): Promise<void> {
    if (this.redis.status === 'ready' || this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.redis.off('ready', done);
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
      this.redis.on('ready', done);
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
    });
  }
}
