import {
  BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown,
} from '@nestjs/common';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, routeDelayType } from './distributed-queue.constants';
import { TaskSubmitService } from './services/task-submit.service';
import type { Task } from './interfaces';
import { mergeWorkerOptions } from './options/resolve-options';
import { DistributedQueueExplorer } from './distributed-queue.explorer';
import { WORKERS_STARTED } from './distributed-queue.messages';
import { DelayQueueStore } from './delay/delay-queue.store';
import { TaskConsumer } from './delay/task-consumer';
import type { ResolvedModuleOptions } from './options/resolve-options';
import { EventSubscriber } from './runtime/event-subscriber';
import { TaskEventBus } from './events/task-event-bus';
import { closeRedisClient } from './redis/redis-connection';
import type { RedisClient } from './redis/script-loader';

/**
 * Starts a delay-queue consumer per discovered worker at bootstrap (each owns its safety poll and lease
 * renewal timers), wakes them through the shared subscriber, and stops them gracefully before shutdown;
 * closes the command connection last.
 */
@Injectable()
export class DistributedQueueOrchestrator implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('DistributedQueue');
  private readonly consumers = new Map<string, TaskConsumer>();
  private readonly onReconnect = (): void => this.consumers.forEach((c) => c.poll());

  constructor(
    private readonly explorer: DistributedQueueExplorer,
    private readonly store: DelayQueueStore,
    private readonly submitService: TaskSubmitService,
    private readonly subscriber: EventSubscriber,
    private readonly events: TaskEventBus,
    @Inject(DISTRIBUTED_QUEUE_REDIS) private readonly redis: RedisClient,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const all = this.explorer.getWorkers();
    const workers = all.filter((w) => !w.options.ordered);
    const route = this.options.route;
    if (route && all.some((w) => w.options.ordered)) {
      // Delayed ordered tasks wait in the delay queue and enter their partition when due.
      const handler = { handle: (task: Task<{ key: string; item: string }>) => this.submitService.enqueueDueOrdered(task.id, task.payload) };
      const options = mergeWorkerOptions(this.options.defaults, { concurrency: 10 });
      workers.push({ type: routeDelayType(route.qId), className: 'RouteDelayMover', handler, options });
    }
    if (workers.length === 0) return;
    // NOTE: the internal mover of delayed ordered tasks reports no events: the ordered task's run does.
    const internal = new Set(route ? [routeDelayType(route.qId)] : []);
    for (const { type, handler, options } of workers) {
      this.consumers.set(type, new TaskConsumer(type, handler, options, this.store, this.options.keepDone, this.logger, internal.has(type) ? undefined : this.events));
    }
    this.subscriber.onReconnect(this.onReconnect);
    this.redis.on('ready', this.onReconnect);
    await Promise.all([...this.consumers.values()].map((c) => this.subscriber.subscribe(this.store.keys(c.type).events, (m) => c.onEvent(m))));
    for (const consumer of this.consumers.values()) consumer.start();
    this.logger.log(WORKERS_STARTED(workers.map((w) => w.type)));
  }

  /** The consumers running in this process (health checks and metrics read them). */
  getConsumers(): TaskConsumer[] {
    return [...this.consumers.values()];
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([...this.consumers.values()].map((c) => c.stop(this.options.shutdownTimeoutMs)));
    this.consumers.clear();
  }

  async onApplicationShutdown(): Promise<void> {
    this.redis.off('ready', this.onReconnect);
    await closeRedisClient(this.redis);
  }
}
