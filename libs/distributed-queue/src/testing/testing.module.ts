import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import {
  DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, DURABLE_WRITES, FLOW_PROGRESS, ROUTE_STORE, TASK_TRACER,
} from '../distributed-queue.constants';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { DelayCleaningStore } from '../delay/delay-cleaning.store';
import { DelayQueueStore } from '../delay/delay-queue.store';
import { TaskWaiters } from '../delay/task-waiters';
import { TaskEventBus } from '../events/task-event-bus';
import { FlowEvents } from '../flow/flow-events';
import type { DistributedQueueModuleOptions } from '../interfaces';
import { resolveModuleOptions, type ResolvedModuleOptions } from '../options/resolve-options';
import { RedisConnections } from '../redis/redis-connections';
import type { DurableWrites } from '../redis/durable-writes';
import type { EventStreams } from '../events/event-streams';
import { RouteControlStore } from '../route/route-control.store';
import type { RouteStore } from '../route/route.store';
import { MemoryRouteControl } from './memory-route-store';
import { EventSubscriber } from '../runtime/event-subscriber';
import { QueueControlService } from '../services/queue-control.service';
import { TaskGroupsService } from '../services/task-groups.service';
import { TaskInspectorService } from '../services/task-inspector.service';
import { TaskSubmitService } from '../services/task-submit.service';
import { TaskScheduleService } from '../cron/task-schedule.service';
import { MemoryCleaningStore } from './memory-cleaning-store';
import { MemoryDelayStore } from './memory-delay-store';
import { MemoryEventSubscriber } from './memory-event-subscriber';
import { MemoryEventBus } from './memory-event-bus';
import { MemoryFlowProgress, memoryPublisher } from './memory-flow-progress';
import { MemoryFlowStore } from './memory-flow-store';
import { TaskFlowService } from '../services/task-flow.service';
import { DistributedQueueHealthIndicator } from '../health/distributed-queue.health';
import { TaskHistoryService } from '../history/task-history.service';
import type { HistoryWriter } from '../history/history-writer';
import { MemoryHealthIndicator } from './memory-health';
import { LazyExplorer } from './lazy-explorer';
import { MemoryInspectorService } from './memory-inspector.service';
import { MemoryScheduleService } from './memory-schedule.service';
import { memoryDurableWrites } from './memory-durable-writes';
import { TestQueue, TESTING_OPTIONS } from './test-queue';
import { checkTestingOptions, type DistributedQueueTestingOptions, type ResolvedTestingOptions } from './testing-options';

/**
 * `DistributedQueueModule` for an application's unit tests: the same services (`TaskSubmitService`,
 * `TaskInspectorService`, `QueueControlService`, `TaskGroupsService`, `TaskFlowService`, `TaskScheduleService`), the same
 * `@TaskWorker`, `@OnTaskEvent` and `@DistributedCron` discovery and the same checks and errors, on an
 * in-memory engine: no Redis, no connection, no timer left when the test ends. `TestQueue` (injectable)
 * runs the tasks and moves the clock. Global, as the real module is by default.
 * @example
 * const moduleRef = await Test.createTestingModule({
 *   imports: [DistributedQueueTestingModule.forRoot()],
 *   providers: [OrderService, CancelUnpaidOrderWorker],
 * }).compile();
 * await moduleRef.init();
 */
@Module({})
export class DistributedQueueTestingModule {
  /**
   * The module with `options`: the real module's (workers' defaults, `types`, `strictTypes`, limits,
   * `route`, `keepDone`, ...; the connection's, `durability`'s replicas, `metrics`, `tracing` and `history`
   * are accepted and do nothing) and the testing ones (`run`, `now`, `workerOptions`).
   * @throws InvalidOptionsError for a bad option, as `DistributedQueueModule.forRoot` does, at once
   */
  static forRoot(options: DistributedQueueTestingOptions = {}): DynamicModule {
    const { testing, module } = checkTestingOptions(options);
    const resolved = resolveModuleOptions({ ...module, waitForRedis: false });
    const providers: Provider[] = [
      { provide: TESTING_OPTIONS, useValue: testing },
      { provide: DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, useValue: resolved },
      // NOTE: no Redis; what is published (flow ends) goes to the in-process channels
      { provide: DISTRIBUTED_QUEUE_REDIS, useFactory: (subscriber: MemoryEventSubscriber) => memoryPublisher(subscriber), inject: [EventSubscriber] },
      { provide: RedisConnections, useValue: { abortStartup: (): void => undefined } },
      { provide: TASK_TRACER, useValue: null },
      { provide: ROUTE_STORE, useFactory: (queue: TestQueue) => queue.route ?? null, inject: [TestQueue] },
      { provide: RouteControlStore, useFactory: (queue: TestQueue) => (queue.route ? new MemoryRouteControl(queue.route) : null), inject: [TestQueue] },
      {
        provide: FLOW_PROGRESS,
        useFactory: (queue: TestQueue, options: ResolvedModuleOptions, events: FlowEvents) => queue.useFlows(new MemoryFlowProgress(new MemoryFlowStore(queue.engine, options.flows.retentionMs), options.flows.maxResultBytes, events)),
        inject: [TestQueue, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, FlowEvents],
      },
      { provide: EventSubscriber, useClass: MemoryEventSubscriber },
      { provide: TaskEventBus, useClass: MemoryEventBus },
      FlowEvents,
      LazyExplorer,
      {
        provide: DistributedQueueExplorer,
        useFactory: (explorer: LazyExplorer, testing: ResolvedTestingOptions) => Object.assign(explorer, { overrides: testing.workerOptions }),
        inject: [LazyExplorer, TESTING_OPTIONS],
      },
      TestQueue,
      { provide: DelayQueueStore, useFactory: (queue: TestQueue) => new MemoryDelayStore(queue.engine, queue.limits, queue.groups), inject: [TestQueue] },
      { provide: DelayCleaningStore, useFactory: (queue: TestQueue) => new MemoryCleaningStore(queue.engine, (type) => queue.hasWorker(type), (type) => {
        queue.groups.forget(type);
        queue.limits.forget(type);
      }), inject: [TestQueue] },
      {
        provide: DURABLE_WRITES,
        useFactory: (store: DelayQueueStore, options: ResolvedModuleOptions) => (options.durability ? memoryDurableWrites(store) : null),
        inject: [DelayQueueStore, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS],
      },
      TaskWaiters,
      TaskSubmitService,
      {
        provide: TaskInspectorService,
        useFactory: (
          queue: TestQueue, store: DelayQueueStore, explorer: DistributedQueueExplorer, options: ResolvedModuleOptions, durable: DurableWrites | null,
          route: RouteStore | null, control: RouteControlStore | null,
        ) => {
          // NOTE: no event streams: getActivity is the engine's (see MemoryInspectorService)
          const inspector = new MemoryInspectorService(store, explorer, route, control, null as unknown as EventStreams, options, durable);
          inspector.useQueue(queue);
          return inspector;
        },
        inject: [TestQueue, DelayQueueStore, DistributedQueueExplorer, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, DURABLE_WRITES, ROUTE_STORE, RouteControlStore],
      },
      QueueControlService,
      TaskGroupsService,
      TaskFlowService,
      { provide: DistributedQueueHealthIndicator, useFactory: (queue: TestQueue) => new MemoryHealthIndicator(queue), inject: [TestQueue] },
      // NOTE: no history (PostgreSQL): its calls say so, as without the module's `history` option
      { provide: TaskHistoryService, useFactory: () => new TaskHistoryService(null, null as unknown as HistoryWriter) },
      {
        provide: TaskScheduleService,
        useFactory: (queue: TestQueue, store: MemoryDelayStore, explorer: DistributedQueueExplorer, options: ResolvedModuleOptions) =>
          new MemoryScheduleService(queue.engine, store, explorer, options),
        inject: [TestQueue, DelayQueueStore, DistributedQueueExplorer, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS],
      },
    ];
    return {
      module: DistributedQueueTestingModule,
      global: true,
      imports: [DiscoveryModule],
      providers,
      exports: [
        TestQueue, TaskSubmitService, TaskInspectorService, QueueControlService, TaskGroupsService, TaskFlowService, TaskScheduleService,
        DistributedQueueHealthIndicator, TaskHistoryService,
      ],
    };
  }
}
