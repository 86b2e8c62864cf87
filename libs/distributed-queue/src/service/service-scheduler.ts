import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS } from '../distributed-queue.constants';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { DistributedQueueOrchestrator } from '../distributed-queue.orchestrator';
import type { BackoffOptions } from '../interfaces';
import { mergeWorkerOptions, validateWorkerOptions, type ResolvedModuleOptions } from '../options/resolve-options';
import type { RedisClient } from '../redis/script-loader';
import { EventSubscriber } from '../runtime/event-subscriber';
import { shutdownCall } from '../runtime/graceful-stop';
import type { ServerResponse } from 'http';
import { StartupSteps } from '../runtime/startup-steps';
import { DelayQueueStore } from '../delay/delay-queue.store';
import { HttpDelivery, LEGACY_MAX_REQUEST_BYTES } from './http-delivery';
import { REQUEST_OVERHEAD_BYTES } from './request-body';
import { redisReplayGuard } from './replay-guard';
import type { IncomingRequest } from './request-body';
import { SchedulerRpcServer } from './scheduler-rpc-server';
import { ServiceRegistry, type ServiceInstance, type ServiceTypeOptions } from './service-registry';
import { reportFailure } from '../redis/outage-log';

interface RunningType {
  app: string;
  /** The registered options as JSON: a change restarts the type's consumer. */
  options: string;
}

/**
 * Scheduler mode (`mode: 'scheduler'`): runs a delay-queue consumer for each type of each registered
 * application that has a live instance, delivering over HTTP (`HttpDelivery`). A type whose application
 * has no live instance has no consumer, so its tasks wait instead of failing. The registry is read again
 * on every change message and every `syncIntervalMs`. Several replicas may run: the delay queue's leases
 * keep two from delivering the same attempt, and a dead replica's deliveries are redone after the lease.
 */
@Injectable()
export class ServiceScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('DistributedQueue');
  private readonly registry: ServiceRegistry;
  private readonly rpc: SchedulerRpcServer;
  private readonly running = new Map<string, RunningType>();
  private readonly instances = new Map<string, readonly ServiceInstance[]>();
  private timer?: NodeJS.Timeout;
  private syncing?: Promise<void>;
  private again = false;
  private stopped = false;
  /** Registrations found invalid (warned about once). */
  private readonly invalid = new Set<string>();

  /** @internal Nest creates it (dependency injection): inject the class, do not construct it. */
  constructor(
    private readonly orchestrator: DistributedQueueOrchestrator,
    private readonly explorer: DistributedQueueExplorer,
    private readonly subscriber: EventSubscriber,
    private readonly store: DelayQueueStore,
    @Inject(DISTRIBUTED_QUEUE_REDIS) redis: RedisClient,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    private readonly startup: StartupSteps,
  ) {
    this.registry = new ServiceRegistry(redis, options.keyPrefix);
    this.rpc = new SchedulerRpcServer(
      options.scheduler?.secret ?? '', this.registry, store, redisReplayGuard(redis, options.keyPrefix, 'rpc'), options.scheduler?.maxRequestBytes,
    );
  }

  /** @internal Answers a call of an application without Redis (`service.url`): see `SchedulerRpcServer`. The module mounts it. */
  handleClientCall(req: IncomingRequest, res: ServerResponse): Promise<void> {
    return this.rpc.handle(req, res);
  }

  /** Nest lifecycle hook: with the `scheduler` option, starts following the registry and delivering. */
  onApplicationBootstrap(): Promise<void> {
    const scheduler = this.options.scheduler;
    if (!scheduler) return Promise.resolve();
    return this.startup.run('service scheduler', () => this.follow(scheduler.syncIntervalMs));
  }

  /** Follows the registry: its change messages, every `syncIntervalMs`, and now. */
  private async follow(syncIntervalMs: number): Promise<void> {
    await this.subscriber.subscribe(this.registry.keys.changes, () => this.sync());
    // NOTE: once: a step that failed part-way runs again with waitForRedis.
    if (!this.timer) {
      this.subscriber.onReconnect(() => this.sync());
      this.timer = setInterval(() => this.sync(), syncIntervalMs);
    }
    this.sync();
    await this.syncing;
  }

  /** The application that owns `type` in the registry, or null (the HTTP API submits only owned types). */
  ownerOf(type: string): Promise<string | null> {
    return this.registry.ownerOf(type);
  }

  /**
   * The largest payload (bytes of its JSON) a task of `type` may have to fit one delivery request of the
   * owning application (the `service.maxRequestBytes` it registered, less room for the request's own
   * fields); null when no application owns the type.
   */
  async payloadLimitOf(type: string): Promise<number | null> {
    const owner = await this.registry.ownerOf(type);
    if (owner === null) return null;
    const registered = (await this.registry.types(owner))[type];
    return (registered?.maxRequestBytes ?? LEGACY_MAX_REQUEST_BYTES) - REQUEST_OVERHEAD_BYTES;
  }

  /** Every registered application: its live instances and its types with their options. */
  async describe(): Promise<
    {
      /** The application's name (`service.appName`). */
      app: string;
      /** Its live instances. */
      instances: ServiceInstance[];
      /** The task types it owns, with their options. */
      types: Record<string, ServiceTypeOptions>;
    }[]
  > {
    const apps = await this.registry.apps();
    return Promise.all(apps.map(async (app) => {
      const [instances, types] = await Promise.all([this.registry.instances(app), this.registry.types(app)]);
      return { app, instances, types };
    }));
  }

  /** The types whose deliveries run here, by application. */
  runningTypes(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const [type, { app }] of this.running) out.set(app, [...(out.get(app) ?? []), type].sort());
    return out;
  }

  /** Reads the registry again (one read at a time; a request during a read makes one more). */
  sync(): void {
    if (this.stopped) return;
    if (this.syncing) {
      this.again = true;
      return;
    }
    this.syncing = this.syncOnce()
      .catch((error: Error) => reportFailure(this.logger, 'Service mode: reading the registry', error, `Service mode: could not read the registry: ${error.message}`))
      .finally(() => {
        this.syncing = undefined;
        if (this.again) {
          this.again = false;
          this.sync();
        }
      });
  }

  private async syncOnce(): Promise<void> {
    const wanted = new Map<string, RunningType & { parsed: ServiceTypeOptions }>();
    for (const { app, instances, types } of await this.describe()) {
      this.instances.set(app, instances);
      if (instances.length === 0) continue;
      for (const [type, parsed] of Object.entries(types)) {
        const options = JSON.stringify(parsed);
        if (this.isValid(app, type, parsed, options)) wanted.set(type, { app, options, parsed });
      }
    }
    if (this.stopped) return;
    const changes: Promise<void>[] = [];
    for (const [type, current] of this.running) {
      const next = wanted.get(type);
      if (next && next.app === current.app && next.options === current.options) continue;
      this.running.delete(type);
      changes.push(this.orchestrator.removeConsumer(type).then(() => this.logger.log(`Service mode: "${type}" of "${current.app}" stopped`)));
    }
    await Promise.all(changes);
    for (const [type, next] of wanted) {
      if (this.running.has(type) || this.stopped) continue;
      this.running.set(type, { app: next.app, options: next.options });
      await this.start(type, next.app, next.parsed);
    }
  }

  /** Whether a type's registered options can run (a registry written by another version may not). */
  private isValid(app: string, type: string, parsed: ServiceTypeOptions, json: string): boolean {
    try {
      const { concurrency, maxAttempts, timeoutMs, backoff } = parsed;
      validateWorkerOptions({ concurrency, maxAttempts, timeoutMs, backoff: backoff as BackoffOptions }, `"${type}" registered by "${app}"`);
      return true;
    } catch (error) {
      if (!this.invalid.has(`${type} ${json}`)) this.logger.error(`Service mode: not delivering: ${(error as Error).message}`);
      this.invalid.add(`${type} ${json}`);
      return false;
    }
  }

  private async start(type: string, app: string, registered: ServiceTypeOptions): Promise<void> {
    const scheduler = this.options.scheduler!;
    const handler = new HttpDelivery(
      app, type, scheduler.secret, registered.timeoutMs, scheduler.deliveryGraceMs, () => this.instances.get(app) ?? [], (id) => this.store.lastFailedOn(type, id),
      (instance, why) => this.instanceRefused(app, instance, why), registered.maxRequestBytes,
    );
    const options = mergeWorkerOptions(this.options.defaults, {
      concurrency: registered.concurrency,
      maxAttempts: registered.maxAttempts,
      backoff: registered.backoff as BackoffOptions,
      // NOTE: the instance answers 504 at timeoutMs; the grace covers the network before the scheduler gives up.
      timeoutMs: registered.timeoutMs + scheduler.deliveryGraceMs,
      visibilityTimeoutMs: scheduler.visibilityTimeoutMs,
    });
    this.explorer.addRuntimeType(type);
    await this.orchestrator.addConsumer(type, handler, options);
    this.logger.log(`Service mode: delivering "${type}" to "${app}" (${this.instances.get(app)?.length ?? 0} live instances)`);
  }

  /**
   * An instance refused a delivery's connection (nothing listens: it died), or refused the delivery before
   * running it (starting, its Redis unreachable): no more deliveries to it from
   * this replica at once, and it is removed from the registry, which tells every replica. A live instance
   * registers again with its next heartbeat.
   */
  private instanceRefused(app: string, instance: ServiceInstance, why: string): void {
    const live = this.instances.get(app);
    if (!live?.some((i) => i.id === instance.id)) return;
    this.instances.set(app, live.filter((i) => i.id !== instance.id));
    this.logger.warn(`Service mode: instance ${instance.id} of "${app}" refused a delivery (${why}): removed from the registry until its next heartbeat (its tasks wait for a live instance)`);
    this.registry.leave(app, instance.id).catch((error: Error) => this.logger.warn(`Service mode: could not remove instance ${instance.id}: ${error.message}`));
  }

  /** Nest lifecycle hook: stops following the registry (the orchestrator stops the deliveries). */
  async beforeApplicationShutdown(): Promise<void> {
    await this.startup.halt();
    this.stopped = true;
    this.rpc.closing = true;
    clearInterval(this.timer);
    await shutdownCall(this.syncing, 'registry sync').catch(() => undefined);
    // NOTE: the orchestrator stops the consumers themselves (running deliveries get shutdownTimeoutMs).
  }
}
