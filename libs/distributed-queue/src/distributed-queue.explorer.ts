import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, TASK_TRACER, TASK_WORKER_METADATA, isInternalType } from './distributed-queue.constants';
import { DUPLICATE_WORKER, MISSING_HANDLE } from './distributed-queue.messages';
import type { TaskWorkerMetadata } from './decorators/task-worker.decorator';
import { InvalidOptionsError, InvalidTaskWorkerError } from './errors';
import type { TaskHandler } from './interfaces';
import {
  DEFAULT_ORDERED_CONCURRENCY, mergeWorkerOptions, validateWorkerOptions, type ResolvedModuleOptions, type ResolvedWorkerOptions,
} from './options/resolve-options';
import { delayOnlyOption } from './options/resolve-limits';
import type { TaskTracer } from './tracing/task-tracer';
import { RedisConnections } from './redis/redis-connections';

/** A discovered worker with its options resolved (decorator over `types[type]` over `defaults`). */
export interface DiscoveredWorker {
  type: string;
  className: string;
  handler: TaskHandler;
  options: ResolvedWorkerOptions;
}

/** Finds `@TaskWorker` providers at module init and records them; starts nothing. */
@Injectable()
export class DistributedQueueExplorer implements OnModuleInit {
  private readonly workers = new Map<string, DiscoveredWorker>();
  /** The provider instance of each type (a worker's `handler` may be it wrapped in a span). */
  private readonly instances = new Map<string, TaskHandler>();
  private readonly runtimeTypes = new Set<string>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Inject(TASK_TRACER) private readonly tracer: TaskTracer | null,
    private readonly connections: RedisConnections,
  ) {}

  onModuleInit(): void {
    if (!this.options.workers) return;
    try {
      for (const wrapper of this.discovery.getProviders()) {
        const { instance, metatype } = wrapper;
        if (!instance || !metatype || typeof metatype !== 'function') continue;
        const meta = this.reflector.get<TaskWorkerMetadata | undefined>(TASK_WORKER_METADATA, metatype);
        if (meta) this.record(meta, metatype.name, instance as TaskHandler);
      }
    } catch (error) {
      // NOTE: Nest closes nothing of an application whose start-up failed (close() rethrows the failure), and
      // the connections are opening meanwhile (every onModuleInit runs at once): they would keep it alive.
      this.connections.abortStartup();
      throw error;
    }
  }

  private record({ type, options }: TaskWorkerMetadata, className: string, handler: TaskHandler): void {
    const existing = this.workers.get(type);
    if (existing && this.instances.get(type) !== handler) {
      throw new InvalidTaskWorkerError(DUPLICATE_WORKER(type, existing.className, className));
    }
    if (existing) return;
    if (typeof handler.handle !== 'function') throw new InvalidTaskWorkerError(MISSING_HANDLE(className, type));
    validateWorkerOptions(options, `@TaskWorker('${type}')`);
    const layers = [this.options.types[type], options];
    let resolved = mergeWorkerOptions(this.options.defaults, ...layers);
    if (resolved.ordered && ![this.options.declaredDefaults, ...layers].some((l) => l?.concurrency !== undefined)) {
      resolved = { ...resolved, concurrency: DEFAULT_ORDERED_CONCURRENCY };
    }
    if (resolved.ordered && this.options.mode === 'service') {
      throw new InvalidOptionsError('mode', `'service' runs delay-queue types only: ${className} is an ordered @TaskWorker('${type}')`);
    }
    const delayOnly = resolved.ordered ? delayOnlyOption(resolved) : undefined;
    if (delayOnly) {
      // NOTE: an ordered type's partitions live on different cluster masters: no one script sees them all.
      throw new InvalidOptionsError(delayOnly, `is for delay-queue types: ${className} is an ordered @TaskWorker('${type}') (its partitions may live on different cluster masters, and its tasks run in key order; bound it with route.keyConcurrency and its concurrency)`);
    }
    if (resolved.ordered && !this.options.route) {
      throw new InvalidOptionsError('route', `is required: ${className} is an ordered @TaskWorker('${type}')`);
    }
    this.instances.set(type, handler);
    // NOTE: wrapped once here, so that both engines run every handler in its span.
    const traced = this.tracer ? this.tracer.wrap(type, handler) : handler;
    this.workers.set(type, { type, className, handler: traced, options: resolved });
  }

  /** Workers found, by type. */
  getWorkers(): DiscoveredWorker[] {
    return [...this.workers.values()];
  }

  /**
   * Records a type this process runs without a worker of its own (the scheduler of service mode, for the
   * types applications registered): it is known from then on, for metrics, listings and submits.
   */
  addRuntimeType(type: string): void {
    this.runtimeTypes.add(type);
  }

  /** Every type this application knows: its workers', those declared in `types` and run-time ones (none internal). */
  knownTypes(): string[] {
    const types = new Set([...this.workers.keys(), ...Object.keys(this.options.types), ...this.runtimeTypes]);
    return [...types].filter((type) => !isInternalType(type));
  }

  /** Whether this application knows `type`: a worker here handles it or `types` declares it. */
  isKnown(type: string): boolean {
    return this.workers.has(type) || type in this.options.types || this.runtimeTypes.has(type);
  }

  /** Whether `type` is ordered: by its worker here, else by the `types` option. */
  isOrdered(type: string): boolean {
    return this.workers.get(type)?.options.ordered ?? this.options.types[type]?.ordered ?? false;
  }
}
