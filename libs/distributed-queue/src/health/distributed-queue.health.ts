import { Inject, Injectable } from '@nestjs/common';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, isInternalType } from '../distributed-queue.constants';
import { DistributedQueueOrchestrator } from '../distributed-queue.orchestrator';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import type { RedisClient } from '../redis/script-loader';
import { RouteOrchestrator } from '../route/route.orchestrator';
import { toError } from '../runtime/handler-call';
import { typeLabel } from '../runtime/type-label';
import { withTimeout } from '../runtime/with-timeout';
import { consumerHealth, heartbeatHealth, memoryHealth, overallHealth, routeMemberHealth, startupHealth, type HealthCheckDetail } from './health-checks';
import { readServerMemory } from '../redis/server-memory';
import { RedisConnections } from '../redis/redis-connections';
import { StartupSteps } from '../runtime/startup-steps';
import { InvalidArgumentError } from '../errors';
import { quote } from '../errors/quote';
import { ServiceClient } from '../service/service-client';

/** What `isHealthy` checked: Redis, each running consumer, and this machine's route queue membership. */
export interface DistributedQueueHealthDetail extends HealthCheckDetail {
  /** Redis answered PING within the bound. */
  redis: HealthCheckDetail;
  /**
   * Redis's memory (`INFO memory` of the server, or of each master): used and maximum bytes per server; down
   * at `maxmemory` (writes refused), a `memory pressure` message from 90 %. Absent when it could not be read.
   */
  memory?: HealthCheckDetail;
  /**
   * Per running delay-queue consumer (by type): it reached Redis recently. The library's own consumers
   * (`__route__.<qId>`, `__cron__`, `__cron__.<schedule>`) only with `includeInternalTypes`; they count
   * towards `status` either way, named by what they do in `message`.
   */
  consumers: Record<string, HealthCheckDetail>;
  /** When this application runs ordered workers: its machine heartbeats, so it is a member of the route queue. */
  route?: HealthCheckDetail;
  /** Service mode: this instance's registration with the scheduler (its last heartbeat). */
  service?: HealthCheckDetail;
  /**
   * With `waitForRedis`: down until every part of the library has started (while waiting for Redis: since
   * when, the last connection error and the parts not started yet; or the part that failed to start).
   */
  startup?: HealthCheckDetail;
}

/**
 * A health indicator result: `{ [key]: { status: 'up' | 'down', ... } }`, the shape `@nestjs/terminus`
 * (11 and 12) reads from a `HealthIndicatorFunction`.
 */
export type DistributedQueueHealthResult<K extends string = 'distributed-queue'> = Record<K, DistributedQueueHealthDetail>;

/** Options of `isHealthy`. */
export interface HealthCheckOptions {
  /** How long Redis has to answer PING, in ms. @default 1000 */
  timeoutMs?: number;
  /** List the library's own consumers in `consumers` too, under their types. @default false */
  includeInternalTypes?: boolean;
}

/** @throws InvalidArgumentError for a key that is not a non-empty string or options that are not `HealthCheckOptions` */
function checkHealthArgs(key: unknown, options: unknown): void {
  if (typeof key !== 'string' || key.length === 0) throw new InvalidArgumentError('key', `must be a non-empty string, got ${quote(key)}`);
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options', `must be { timeoutMs?, includeInternalTypes? }, got ${quote(options)}`);
  const { timeoutMs } = options as HealthCheckOptions;
  if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 60_000)) {
    throw new InvalidArgumentError('options.timeoutMs', `must be an integer from 1 to 60000, got ${quote(timeoutMs)}`);
  }
}

/**
 * Health of the queues in this application instance, for `@nestjs/terminus` (an optional peer: this class
 * does not import it) or any other health endpoint:
 *
 * ```ts
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.queue.isHealthy()]); }
 * ```
 *
 * It resolves, never rejects, with `status: 'down'` when something failed: terminus then answers 503 with
 * the details (which checks failed and why) under the key.
 */
@Injectable()
export class DistributedQueueHealthIndicator {
  /** @internal Nest creates it (dependency injection): inject the class, do not construct it. */
  constructor(
    @Inject(DISTRIBUTED_QUEUE_REDIS) private readonly redis: RedisClient,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    private readonly orchestrator: DistributedQueueOrchestrator,
    private readonly route: RouteOrchestrator,
    private readonly serviceClient: ServiceClient,
    private readonly startup: StartupSteps,
    private readonly connections: RedisConnections,
  ) {}

  /**
   * Checks that Redis answers PING within `timeoutMs`, that every running consumer reached Redis within its
   * visibility timeout, and that this machine's route queue heartbeat is younger than `route.offlineMs`.
   * @default key 'distributed-queue'
   * @throws InvalidArgumentError for a key that is not a non-empty string, options not an object, or a timeoutMs not from 1 to 60000
   */
  async isHealthy<K extends string = 'distributed-queue'>(key: K = 'distributed-queue' as K, options: HealthCheckOptions = {}): Promise<DistributedQueueHealthResult<K>> {
    checkHealthArgs(key, options);
    // NOTE: with service.url there is no Redis: the service instance's heartbeat shows the scheduler is reached.
    const redis: HealthCheckDetail = this.options.service?.url
      ? { status: 'up', message: 'not used: this application reaches the queues through the scheduler' }
      : await this.pingRedis(options.timeoutMs ?? 1000);
    const memory = redis.status === 'up' && !this.options.service?.url ? await this.readMemory(options.timeoutMs ?? 1000) : undefined;
    const now = Date.now();
    const all = this.orchestrator.getConsumers().map((c): [string, HealthCheckDetail] => [c.type, consumerHealth(c, now)]);
    const consumers = Object.fromEntries(all.filter(([type]) => options.includeInternalTypes || !isInternalType(type)));
    const machine = this.route.routeMachine;
    const route = machine && this.options.route
      ? routeMemberHealth(this.options.route.qId, machine.id, machine.lastHeartbeatAt, this.options.route.offlineMs, now)
      : undefined;
    const checks: [string, HealthCheckDetail][] = [['redis', redis], ...all.map(([type, d]): [string, HealthCheckDetail] => [`consumer ${typeLabel(type)}`, d])];
    if (memory) checks.push(['redis memory', memory]);
    if (route) checks.push(['route', route]);
    const service = this.options.service;
    const instance = service
      ? heartbeatHealth({ app: service.appName, instance: service.instanceId }, this.serviceClient.lastRenewAt, service.instanceTtlMs, now)
      : undefined;
    if (instance) checks.push(['service instance', instance]);
    const startup = this.startup.waits ? startupHealth(this.startup.state, this.connections.target, now) : undefined;
    if (startup) checks.push(['startup', startup]);
    const detail: DistributedQueueHealthDetail = {
      ...overallHealth(checks), redis, ...(memory ? { memory } : {}), consumers, ...(route ? { route } : {}), ...(instance ? { service: instance } : {}), ...(startup ? { startup } : {}),
    };
    return { [key]: detail } as DistributedQueueHealthResult<K>;
  }

  /** Redis's memory, or undefined when it cannot be read within the bound (INFO refused, or no answer). */
  private async readMemory(timeoutMs: number): Promise<HealthCheckDetail | undefined> {
    try {
      return memoryHealth(await withTimeout(readServerMemory(this.redis, this.connections.target), timeoutMs, 'INFO memory'));
    } catch {
      return undefined;
    }
  }

  private async pingRedis(timeoutMs: number): Promise<HealthCheckDetail> {
    const started = performance.now();
    try {
      await withTimeout(Promise.resolve().then(() => this.redis.ping()), timeoutMs, 'PING');
      return { status: 'up', responseTimeMs: Math.round(performance.now() - started) };
    } catch (error) {
      return { status: 'down', message: toError(error).message };
    }
  }
}
