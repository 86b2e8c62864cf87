import {
  BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import {
  DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, leaseIntervalName, pollIntervalName, routeDelayType,
} from './distributed-queue.constants';
import { TaskSubmitService } from './services/task-submit.service';
import type { Task } from './interfaces';
import { mergeWorkerOptions } from './options/resolve-options';
import { DistributedQueueExplorer } from './distributed-queue.explorer';
import { WORKERS_STARTED } from './distributed-queue.messages';
import { DelayQueueStore } from './delay/delay-queue.store';
import { TaskConsumer } from './delay/task-consumer';
import type { ResolvedModuleOptions } from './options/resolve-options';
import { closeRedisClient, createRedisClient } from './redis/redis-connection';
import type { RedisClient } from './redis/script-loader';

/**
 * Starts a consumer per discovered worker at bootstrap (with its safety poll and lease renewal as
 * SchedulerRegistry intervals and one shared subscriber for wake-ups), and stops them gracefully before
 * shutdown; closes the Redis connections last.
 */
@Injectable()
export class DistributedQueueOrchestrator implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('DistributedQueue');
  private readonly consumers = new Map<string, TaskConsumer>();
  private subscriber?: RedisClient;
  private readonly onReconnect = (): void => this.consumers.forEach((c) => c.poll());

  constructor(
    private readonly explorer: DistributedQueueExplorer,
    private readonly store: DelayQueueStore,
    private readonly scheduler: SchedulerRegistry,
    private readonly submitService: TaskSubmitService,
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
    for (const { type, handler, options } of workers) {
      this.consumers.set(this.store.keys(type).events, new TaskConsumer(type, handler, options, this.store, this.options.keepDone, this.logger));
    }
    this.subscriber = createRedisClient(this.options.connection, 'subscriber', `dq:${this.options.keyPrefix}:subscriber`);
    this.subscriber.on('message', (channel: string, message: string) => this.consumers.get(channel)?.onEvent(message));
    this.subscriber.on('ready', this.onReconnect);
    this.redis.on('ready', this.onReconnect);
    this.subscriber.on('error', (error: Error) => this.logger.debug(`subscriber: ${error.message}`));
    await this.subscriber.subscribe(...this.consumers.keys());
    for (const consumer of this.consumers.values()) {
      const { type, options } = consumer;
      this.scheduler.addInterval(pollIntervalName(type), setInterval(() => consumer.poll(), options.pollIntervalMs));
      this.scheduler.addInterval(leaseIntervalName(type), setInterval(() => void consumer.renewLeases(), consumer.renewEveryMs));
      consumer.start();
    }
    this.logger.log(WORKERS_STARTED(workers.map((w) => w.type)));
  }

  async beforeApplicationShutdown(): Promise<void> {
    for (const { type } of this.consumers.values()) {
      this.deleteInterval(pollIntervalName(type));
      this.deleteInterval(leaseIntervalName(type));
    }
    await Promise.all([...this.consumers.values()].map((c) => c.stop(this.options.shutdownTimeoutMs)));
    this.consumers.clear();
  }

  /** NOTE: the ScheduleModule may have cleared its registry already when shutdown began. */
  private deleteInterval(name: string): void {
    if (this.scheduler.doesExist('interval', name)) this.scheduler.deleteInterval(name);
  }

  async onApplicationShutdown(): Promise<void> {
    this.redis.off('ready', this.onReconnect);
    await Promise.all([this.subscriber && closeRedisClient(this.subscriber), closeRedisClient(this.redis)]);
  }
}
