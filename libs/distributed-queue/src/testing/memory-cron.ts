import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { CRON_TICK_TYPE, DISTRIBUTED_CRON_METADATA, cronRunType } from '../distributed-queue.constants';
import type { DiscoveredWorker } from '../distributed-queue.explorer';
import type { CronRun, DistributedCronMetadata } from '../decorators/distributed-cron.decorator';
import { CronTickHandler } from '../cron/cron-tick.handler';
import { CRON_RUN_MAX_ATTEMPTS } from '../cron/cron.orchestrator';
import { toDefinition } from '../cron/schedule-definition';
import type { TaskScheduleService } from '../cron/task-schedule.service';
import { InvalidScheduleError } from '../errors';
import type { Task } from '../interfaces';
import { mergeWorkerOptions, type ResolvedModuleOptions } from '../options/resolve-options';
import { decoratedMethods } from '../runtime/decorated-methods';

const TICK_OPTIONS = { concurrency: 10, maxAttempts: 20, timeoutMs: 30_000, backoff: { type: 'fixed' as const, delayMs: 1000, jitter: 0 } };

/**
 * Distributed cron in the testing module, as `CronOrchestrator` runs it: the `@DistributedCron` methods
 * (checked when found: `InvalidScheduleError`), declared as schedules, each run a task of the method's run
 * type, and the ticks handled by the real `CronTickHandler` on the in-memory schedules. Its workers join the
 * application's in the runner.
 */
export class MemoryCron {
  private methods: { name: string; cron: string; metadata: DistributedCronMetadata; worker: DiscoveredWorker }[] = [];
  private tickWorker?: DiscoveredWorker;
  private declared = false;

  constructor(
    private readonly options: ResolvedModuleOptions,
    private readonly schedules: () => TaskScheduleService,
  ) {}

  /** Finds the `@DistributedCron` methods. @throws InvalidScheduleError (a bad expression, a name declared twice) */
  discover(discovery: DiscoveryService, scanner: MetadataScanner): void {
    const names = new Map<string, string>();
    this.methods = decoratedMethods<DistributedCronMetadata>(discovery, scanner, DISTRIBUTED_CRON_METADATA).map((found) => {
      const { options } = found.metadata;
      const name = options.name ?? `${found.className}.${found.methodName}`;
      const where = `${found.className}.${found.methodName}`;
      if (names.has(name)) throw new InvalidScheduleError(name, `declared twice (${names.get(name)} and ${where})`);
      names.set(name, where);
      toDefinition(name, { cron: found.metadata.cron, timeZone: options.timeZone, missedTicks: options.missedTicks, type: cronRunType(name) }, this.options.maxPayloadBytes);
      const handler = {
        handle: (task: Task, signal: AbortSignal): unknown => {
          const run: CronRun = { schedule: name, tickAt: Number(task.id.slice(task.id.lastIndexOf('@') + 1)), attempt: task.attempt };
          return found.method.call(found.instance, run, signal);
        },
      };
      const workerOptions = mergeWorkerOptions(this.options.defaults, { concurrency: 1, maxAttempts: options.maxAttempts ?? CRON_RUN_MAX_ATTEMPTS, timeoutMs: options.timeoutMs });
      return { name, cron: found.metadata.cron, metadata: found.metadata, worker: { type: cronRunType(name), className: found.className, handler, options: workerOptions } };
    });
  }

  /** The internal workers: each method's runs, and the ticks (every schedule's, made with `TaskScheduleService` too). */
  workers(): DiscoveredWorker[] {
    this.tickWorker ??= {
      type: CRON_TICK_TYPE, className: 'CronTickHandler', handler: new CronTickHandler(this.schedules().store), options: mergeWorkerOptions(this.options.defaults, TICK_OPTIONS),
    };
    return [...this.methods.map((m) => m.worker), this.tickWorker];
  }

  /** Declares the methods' schedules (once: the same definition again would change nothing anyway). */
  async declare(): Promise<void> {
    if (this.declared) return;
    this.declared = true;
    for (const { name, cron, metadata } of this.methods) {
      const { timeZone, missedTicks } = metadata.options;
      await this.schedules().declare(name, { cron, timeZone, missedTicks, type: cronRunType(name) });
    }
  }
}
