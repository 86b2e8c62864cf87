import {
  BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown,
} from '@nestjs/common';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, DURABLE_ACKS, FLOW_PROGRESS, isInternalType, routeDelayType } from './distributed-queue.constants';
import { TaskSubmitService } from './services/task-submit.service';
import type { Task, TaskHandler } from './interfaces';
import { mergeWorkerOptions } from './options/resolve-options';
import { DistributedQueueExplorer } from './distributed-queue.explorer';
import { WORKERS_STARTED } from './distributed-queue.messages';
import { DelayQueueStore } from './delay/delay-queue.store';
import type { FlowProgress } from './flow/flow-progress';
import type { MoverPayload } from './route/route-producer';
import { TaskConsumer } from './delay/task-consumer';
import type { ResolvedModuleOptions, ResolvedWorkerOptions } from './options/resolve-options';
import { EventSubscriber } from './runtime/event-subscriber';
import { TaskEventBus } from './events/task-event-bus';
import { closeRedisClient } from './redis/redis-connection';
import { labelledLogger } from './runtime/labelled-logger';
import { StartupSteps } from './runtime/startup-steps';
import type { RedisClient } from './redis/script-loader';
import type { AckDurability } from './redis/ack-durability';
import { warnStrandedDelayTasks } from './route/stranded-delay-tasks';

/**
 * In plugin mode, starts a delay-queue consumer per discovered worker at bootstrap (each owns its safety poll and lease
 * renewal timers), wakes them through the shared subscriber, and stops them gracefully before shutdown;
 * closes the command connection last.
 */
@Injectable()
export class DistributedQueueOrchestrator implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('DistributedQueue');
  private readonly consumers = new Map<string, TaskConsumer>();
  /** Types whose consumer is being added (subscribing). */
  private readonly adding = new Set<string>();
  private stopped = false;
  /** Whether the ordered types' delay queues were checked for tasks left from a delay-queue past (once). */
  private strandedChecked = false;
  private readonly onReconnect = (): void => this.consumers.forEach((c) => c.poll());

  constructor(
    private readonly explorer: DistributedQueueExplorer,
    private readonly store: DelayQueueStore,
    private readonly submitService: TaskSubmitService,
    private readonly subscriber: EventSubscriber,
    private readonly events: TaskEventBus,
    @Inject(DISTRIBUTED_QUEUE_REDIS) private readonly redis: RedisClient,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    private readonly startup: StartupSteps,
    @Inject(DURABLE_ACKS) private readonly durableAcks: AckDurability | null,
    @Inject(FLOW_PROGRESS) private readonly flows: FlowProgress | null,
  ) {}

  onApplicationBootstrap(): Promise<void> {
    this.subscriber.onReconnect(this.onReconnect);
    this.redis.on('ready', this.onReconnect);
    // NOTE: in service mode the scheduler runs this application's workers; the scheduler adds its own.
    if (this.options.mode !== 'plugin') return Promise.resolve();
    return this.startup.run('workers', () => this.startWorkers());
  }

  /** Starts the consumers of this application's workers (those not started yet: run again after a failure). */
  private async startWorkers(): Promise<void> {
    const all = this.explorer.getWorkers();
    const workers = all.filter((w) => !w.options.ordered);
    const route = this.options.route;
    if (route && all.some((w) => w.options.ordered)) {
      // Delayed ordered tasks wait in the delay queue and enter their partition when due.
      const options = mergeWorkerOptions(this.options.defaults, { concurrency: 10 });
      const handler = {
        handle: (task: Task<MoverPayload>) => this.submitService.enqueueDueOrdered(task.id, task.payload, task.dueAt, options.visibilityTimeoutMs),
      };
      // NOTE: the internal mover of delayed ordered tasks reports no events: the ordered task's run does.
      if (!this.consumers.has(routeDelayType(route.qId))) await this.addConsumer(routeDelayType(route.qId), handler, options, false);
    }
    await Promise.all(workers.filter(({ type }) => !this.consumers.has(type)).map(({ type, handler, options }) => this.addConsumer(type, handler, options)));
    const types = [...this.consumers.keys()].filter((type) => !isInternalType(type));
    if (types.length > 0) this.logger.log(WORKERS_STARTED(types));
    if (!this.strandedChecked) {
      this.strandedChecked = true;
      await warnStrandedDelayTasks(this.store, all.filter((w) => w.options.ordered).map((w) => w.type), this.logger);
    }
  }

  /**
   * Starts a consumer of `type` in this process (its wake-ups subscribed first).
   * @param withEvents false: it reports no lifecycle events
   */
  async addConsumer(type: string, handler: TaskHandler, options: ResolvedWorkerOptions, withEvents = true): Promise<void> {
    if (this.consumers.has(type) || this.adding.has(type)) throw new Error(`a consumer of "${type}" already runs`);
    const logger = labelledLogger(this.logger, type);
    const consumer = new TaskConsumer(type, handler, options, this.store, { keepDone: this.options.keepDone, maxResultBytes: this.options.maxResultBytes, maxProgressBytes: this.options.maxProgressBytes, taskLogs: this.options.taskLogs }, logger, withEvents ? this.events : undefined, this.durableAcks, this.flows);
    this.adding.add(type);
    try {
      await this.subscriber.subscribe(this.store.keys(type).events, (m) => consumer.onEvent(m));
      // NOTE: the limits its options configure (and none that they do not) hold before its first reserve.
      await this.store.limits.configure(type, options);
    } finally {
      this.adding.delete(type);
    }
    // NOTE: kept once subscribed only: a start-up step that failed part-way runs again for what it lacks.
    if (this.stopped) return;
    this.consumers.set(type, consumer);
    consumer.start();
  }

  /** Stops the consumer of `type` gracefully (running tasks get `shutdownTimeoutMs`, then are handed back). */
  async removeConsumer(type: string): Promise<void> {
    const consumer = this.consumers.get(type);
    if (!consumer) return;
    this.consumers.delete(type);
    await this.subscriber.unsubscribe(this.store.keys(type).events);
    await consumer.stop(this.options.shutdownTimeoutMs);
  }

  /** The consumers running in this process (health checks and metrics read them). */
  getConsumers(): TaskConsumer[] {
    return [...this.consumers.values()];
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.startup.halt();
    this.stopped = true;
    await Promise.all([...this.consumers.values()].map((c) => c.stop(this.options.shutdownTimeoutMs)));
    this.consumers.clear();
  }

  async onApplicationShutdown(): Promise<void> {
    this.redis.off('ready', this.onReconnect);
    await closeRedisClient(this.redis);
  }
}
