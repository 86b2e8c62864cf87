import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { reportFailure } from '../redis/outage-log';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { CRON_TICK_TYPE, DISTRIBUTED_CRON_METADATA, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, cronRunType } from '../distributed-queue.constants';
import { DistributedQueueOrchestrator } from '../distributed-queue.orchestrator';
import type { CronRun, DistributedCronMetadata } from '../decorators/distributed-cron.decorator';
import { InvalidOptionsError, InvalidScheduleError } from '../errors';
import type { Task } from '../interfaces';
import { mergeWorkerOptions, type ResolvedModuleOptions } from '../options/resolve-options';
import { decoratedMethods, type DecoratedMethod } from '../runtime/decorated-methods';
import { StartupSteps } from '../runtime/startup-steps';
import { CronTickHandler } from './cron-tick.handler';
import { toDefinition } from './schedule-definition';
import { TaskScheduleService } from './task-schedule.service';

/**
 * Default runs per tick of a `@DistributedCron` method: a run whose instance died (its lease expired) counts
 * as one, so with 1 a crash would dead-letter the run instead of completing it on another instance.
 */
export const CRON_RUN_MAX_ATTEMPTS = 3;

/** Tick handling is short and must not stop: many attempts, a fixed second between them. */
/** How often an application checks that Redis still holds its `@DistributedCron` schedules. */
const CRON_REPAIR_MS = 5000;

const TICK_OPTIONS = { concurrency: 10, maxAttempts: 20, timeoutMs: 30_000, backoff: { type: 'fixed' as const, delayMs: 1000, jitter: 0 } };

interface CronMethod {
  name: string;
  cron: string;
  found: DecoratedMethod<DistributedCronMetadata>;
}

/**
 * Distributed cron in this instance: finds `@DistributedCron` methods (their schedules checked at module
 * init: `InvalidScheduleError` fails the start), declares their schedules at bootstrap (the same definition
 * from every instance changes nothing), runs a consumer of each method's run type, and handles ticks when
 * `schedules` is on (by default: when this application has `@DistributedCron` methods). In scheduler mode
 * (service mode's scheduler) it handles ticks with `schedules: true`; `apps/scheduler` sets it.
 */
@Injectable()
export class CronOrchestrator implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('DistributedQueue');
  private methods: CronMethod[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly orchestrator: DistributedQueueOrchestrator,
    private readonly schedules: TaskScheduleService,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    private readonly startup: StartupSteps,
  ) {}

  private repairTimer?: NodeJS.Timeout;
  private repairing = false;

  onModuleInit(): void {
    const found = decoratedMethods<DistributedCronMetadata>(this.discovery, this.scanner, DISTRIBUTED_CRON_METADATA);
    if (found.length > 0 && (this.options.mode !== 'plugin' || !this.options.workers)) {
      throw new InvalidOptionsError(this.options.workers ? 'mode' : 'workers', `@DistributedCron methods run in plugin mode with workers (${found[0].className}.${found[0].methodName})`);
    }
    const names = new Map<string, string>();
    this.methods = found.map((method) => {
      const name = method.metadata.options.name ?? `${method.className}.${method.methodName}`;
      const where = `${method.className}.${method.methodName}`;
      if (names.has(name)) throw new InvalidScheduleError(name, `declared twice (${names.get(name)} and ${where})`);
      names.set(name, where);
      this.definitionOf(name, method.metadata);
      return { name, cron: method.metadata.cron, found: method };
    });
  }

  private definitionOf(name: string, { cron, options }: DistributedCronMetadata) {
    return toDefinition(name, { cron, timeZone: options.timeZone, missedTicks: options.missedTicks, type: cronRunType(name) }, this.options.maxPayloadBytes);
  }

  onApplicationBootstrap(): Promise<void> {
    // NOTE: the scheduler of service mode may handle ticks too; its run tasks go to the owning applications.
    if (this.options.mode === 'service' || !this.options.workers) return Promise.resolve();
    return this.startup.run('distributed cron', () => this.start());
  }

  /** Starts the run and tick consumers (those not started yet: run again after a failure), then declares the schedules. */
  private async start(): Promise<void> {
    const running = new Set(this.orchestrator.getConsumers().map((c) => c.type));
    for (const { name, found } of this.methods) {
      if (running.has(cronRunType(name))) continue;
      const { options } = found.metadata;
      const handler = {
        handle: (task: Task, signal: AbortSignal) => {
          const run: CronRun = { schedule: name, tickAt: Number(task.id.slice(task.id.lastIndexOf('@') + 1)), attempt: task.attempt };
          return found.method.call(found.instance, run, signal);
        },
      };
      const workerOptions = mergeWorkerOptions(this.options.defaults, { concurrency: 1, maxAttempts: options.maxAttempts ?? CRON_RUN_MAX_ATTEMPTS, timeoutMs: options.timeoutMs });
      await this.orchestrator.addConsumer(cronRunType(name), handler, workerOptions);
    }
    if ((this.options.schedules ?? this.methods.length > 0) && !running.has(CRON_TICK_TYPE)) {
      const ticks = new CronTickHandler(this.schedules.store);
      await this.orchestrator.addConsumer(CRON_TICK_TYPE, ticks, mergeWorkerOptions(this.options.defaults, TICK_OPTIONS), false);
    }
    for (const { name } of this.methods) await this.declare(name);
    if (this.methods.length > 0 && !this.repairTimer) {
      this.logger.log(`Distributed cron: ${this.methods.map((m) => `${m.name} (${m.cron})`).join(', ')}`);
      this.repairTimer = setInterval(() => void this.repair(), CRON_REPAIR_MS);
      this.repairTimer.unref();
    }
  }

  private declare(name: string): Promise<unknown> {
    const method = this.methods.find((m) => m.name === name)!;
    const { options } = method.found.metadata;
    return this.schedules.declare(name, { cron: method.cron, timeZone: options.timeZone, missedTicks: options.missedTicks, type: cronRunType(name) });
  }

  /**
   * Declares again the `@DistributedCron` schedules Redis lost (restarted without persistence, flushed,
   * failed over to an empty replica: their version counters are gone too, which a removal keeps), so that
   * their ticks go on without a restart of the application.
   */
  private async repair(): Promise<void> {
    if (this.repairing) return;
    this.repairing = true;
    try {
      const lost = await this.schedules.store.unknown(this.methods.map((m) => m.name));
      if (lost.length === 0) return;
      for (const name of lost) await this.declare(name);
      this.logger.warn(
        `Distributed cron: ${lost.map((name) => `"${name}"`).join(', ')} were gone from Redis (restarted without persistence, flushed, ` +
        'or failed over to an empty replica): declared again; ticks due meanwhile do not run, and schedules made with TaskScheduleService are lost',
      );
    } catch (error) {
      reportFailure(this.logger, 'Distributed cron: checking the schedules', error);
    } finally {
      this.repairing = false;
    }
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.repairTimer);
  }
}
