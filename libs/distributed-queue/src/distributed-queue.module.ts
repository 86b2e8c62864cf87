import { Inject, Logger, MiddlewareConsumer, Module, NestModule, Optional, RequestMethod } from '@nestjs/common';
import type { ServerResponse } from 'http';
import { DiscoveryModule, HttpAdapterHost } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, DURABLE_ACKS, DURABLE_WRITES, ROUTE_STORE, SCHEDULER_RPC, TASK_TRACER, FLOW_PROGRESS } from './distributed-queue.constants';
import { RouteOrchestrator } from './route/route.orchestrator';
import { RouteStore } from './route/route.store';
import { DistributedQueueExplorer } from './distributed-queue.explorer';
import { ConfigurableDistributedQueueModule, DISTRIBUTED_QUEUE_MODULE_OPTIONS } from './distributed-queue.module-definition';
import { DistributedQueueOrchestrator } from './distributed-queue.orchestrator';
import { DelayQueueStore } from './delay/delay-queue.store';
import { DelayCleaningStore } from './delay/delay-cleaning.store';
import { RouteControlStore } from './route/route-control.store';
import { QueueControlService } from './services/queue-control.service';
import { TaskGroupsService } from './services/task-groups.service';
import { TaskInspectorService } from './services/task-inspector.service';
import { TaskSubmitService } from './services/task-submit.service';
import { TaskWaiters } from './delay/task-waiters';
import { TaskFlowService } from './services/task-flow.service';
import { FlowEvents } from './flow/flow-events';
import { FlowProgress } from './flow/flow-progress';
import { FlowStore } from './flow/flow.store';
import type { DistributedQueueModuleOptions } from './interfaces';
import { resolveModuleOptions, type ResolvedModuleOptions } from './options/resolve-options';
import { RedisConnections } from './redis/redis-connections';
import { EventSubscriber } from './runtime/event-subscriber';
import { TaskEventBus } from './events/task-event-bus';
import { TaskEventExplorer } from './events/task-event.explorer';
import { EventStreamFollower } from './events/event-stream-follower';
import { EventStreams } from './events/event-streams';
import { historyStoreProvider } from './history/history-store.provider';
import { HistoryWriter } from './history/history-writer';
import { TaskHistoryService } from './history/task-history.service';
import type { RedisClient } from './redis/script-loader';
import { createTaskTracer } from './tracing/task-tracer';
import { DistributedQueueMetrics } from './metrics/distributed-queue.metrics';
import { DistributedQueueHealthIndicator } from './health/distributed-queue.health';
import { ServiceClient } from './service/service-client';
import { CronOrchestrator } from './cron/cron.orchestrator';
import { TaskScheduleService } from './cron/task-schedule.service';
import { ServiceScheduler } from './service/service-scheduler';
import type { IncomingRequest } from './service/request-body';
import { installBodyGate } from './service/body-gate';
import { noRedis } from './redis/no-redis';
import { DatabaseCheck } from './redis/database-check';
import { StartupSteps } from './runtime/startup-steps';
import { SchedulerRpcClient } from './service/scheduler-rpc-client';
import { RemoteDelayQueueStore } from './service/remote-delay-store';
import { DurableWrites } from './redis/durable-writes';
import { AckDurability } from './redis/ack-durability';

/**
 * A private, non-global ScheduleModule with decorator scanning switched off: it gives this module a
 * SchedulerRegistry without registering the application's own @Cron/@Interval jobs a second time.
 */
const PrivateScheduleModule = {
  ...ScheduleModule.forRoot({ cronJobs: false, intervals: false, timeouts: false }),
  global: false,
};

/** Entries kept per event stream; 0 when streams are off. */
const streamLength = (options: ResolvedModuleOptions): number => (options.events.stream ? options.events.streamMaxLen : 0);

/**
 * Distributed queues on Redis. `DistributedQueueModule.forRoot({...})` or `forRootAsync({ useFactory,
 * inject, imports })`; global by default (`isGlobal: false` to scope it). Discovers `@TaskWorker`
 * providers and exports `TaskSubmitService` (submit, cancel, reschedule) and `TaskInspectorService` (state,
 * dead letters, route status).
 */
@Module({
  imports: [DiscoveryModule, PrivateScheduleModule],
  providers: [
    {
      provide: DISTRIBUTED_QUEUE_RESOLVED_OPTIONS,
      useFactory: (options: DistributedQueueModuleOptions) => resolveModuleOptions(options),
      inject: [DISTRIBUTED_QUEUE_MODULE_OPTIONS],
    },
    {
      provide: DISTRIBUTED_QUEUE_REDIS,
      useFactory: (options: ResolvedModuleOptions, connections: RedisConnections) =>
        options.service?.url ? noRedis() : connections.open('commands', 'commands'),
      inject: [DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, RedisConnections],
    },
    {
      provide: SCHEDULER_RPC,
      useFactory: ({ service }: ResolvedModuleOptions) =>
        service?.url ? new SchedulerRpcClient(`${service.url}${service.schedulerPath}`, service.secret, service.appName) : null,
      inject: [DISTRIBUTED_QUEUE_RESOLVED_OPTIONS],
    },
    {
      provide: DelayQueueStore,
      useFactory: (client: RedisClient, options: ResolvedModuleOptions, rpc: SchedulerRpcClient | null) =>
        rpc ? new RemoteDelayQueueStore(rpc, options.service?.maxRequestBytes) : new DelayQueueStore(client, options.keyPrefix, streamLength(options)),
      inject: [DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, SCHEDULER_RPC],
    },
    {
      provide: ROUTE_STORE,
      useFactory: (client: RedisClient, options: ResolvedModuleOptions) =>
        options.route ? new RouteStore(client, options.keyPrefix, options.route, streamLength(options)) : null,
      inject: [DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS],
    },
    {
      // NOTE: only with the option: its own connection (WAIT blocks the connection it is sent on).
      provide: DURABLE_WRITES,
      useFactory: (options: ResolvedModuleOptions, connections: RedisConnections) => {
        if (!options.durability || options.service?.url) return null;
        const client = connections.open('commands', 'durable');
        const length = streamLength(options);
        const route = options.route ? new RouteStore(client, options.keyPrefix, options.route, length) : null;
        return new DurableWrites(client, new DelayQueueStore(client, options.keyPrefix, length), route, options.redisTimeoutMs);
      },
      inject: [DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, RedisConnections],
    },
    {
      // NOTE: one for the application: a replica down is warned about once, whichever worker saw it first.
      provide: DURABLE_ACKS,
      useFactory: (options: ResolvedModuleOptions, durable: DurableWrites | null) =>
        durable && options.durability ? new AckDurability(durable, options.durability, new Logger('DistributedQueue')) : null,
      inject: [DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, DURABLE_WRITES],
    },
    {
      provide: FLOW_PROGRESS,
      useFactory: (client: RedisClient, options: ResolvedModuleOptions, events: FlowEvents) =>
        options.service?.url
          ? null
          : new FlowProgress(new FlowStore(client, options.keyPrefix, streamLength(options), options.flows.retentionMs), options.flows.maxResultBytes, events),
      inject: [DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, FlowEvents],
    },
    {
      provide: TASK_TRACER,
      useFactory: (options: ResolvedModuleOptions) => createTaskTracer(options.tracing),
      inject: [DISTRIBUTED_QUEUE_RESOLVED_OPTIONS],
    },
    {
      provide: DelayCleaningStore,
      useFactory: (client: RedisClient, options: ResolvedModuleOptions) => new DelayCleaningStore(client, options.keyPrefix),
      inject: [DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS],
    },
    {
      provide: RouteControlStore,
      useFactory: (client: RedisClient, route: RouteStore | null) => (route ? new RouteControlStore(client, route) : null),
      inject: [DISTRIBUTED_QUEUE_REDIS, ROUTE_STORE],
    },
    RedisConnections,
    DatabaseCheck,
    StartupSteps,
    DistributedQueueExplorer,
    EventSubscriber,
    TaskEventBus,
    TaskEventExplorer,
    EventStreams,
    EventStreamFollower,
    historyStoreProvider,
    HistoryWriter,
    TaskHistoryService,
    DistributedQueueOrchestrator,
    RouteOrchestrator,
    TaskSubmitService,
    TaskWaiters,
    TaskInspectorService,
    QueueControlService,
    TaskGroupsService,
    FlowEvents,
    TaskFlowService,
    DistributedQueueMetrics,
    DistributedQueueHealthIndicator,
    ServiceClient,
    ServiceScheduler,
    TaskScheduleService,
    CronOrchestrator,
  ],
  exports: [
    TaskSubmitService, TaskInspectorService, QueueControlService, TaskGroupsService, TaskFlowService, DistributedQueueHealthIndicator, TaskHistoryService, ServiceScheduler, TaskScheduleService,
  ],
})
export class DistributedQueueModule extends ConfigurableDistributedQueueModule implements NestModule {
  /** @internal Nest creates the module: import it with `forRoot` / `forRootAsync`. */
  constructor(
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly resolved: ResolvedModuleOptions,
    private readonly serviceClient: ServiceClient,
    private readonly serviceScheduler: ServiceScheduler,
    @Optional() adapterHost?: HttpAdapterHost,
  ) {
    super();
    // NOTE: before Nest adds the application's body parsers (at init): their limit does not apply to these routes.
    const { service, scheduler } = resolved;
    if (service) installBodyGate(adapterHost, service.callbackPath, service.maxRequestBytes);
    if (scheduler) installBodyGate(adapterHost, scheduler.clientPath, scheduler.maxRequestBytes);
  }

  /**
   * Service mode's endpoints (the client's callback, the scheduler's client path) are plain middleware on
   * POST, so that the application's global guards, pipes and interceptors (its own authentication) do not
   * apply: the request's signature does.
   */
  configure(consumer: MiddlewareConsumer): void {
    const { service, scheduler } = this.resolved;
    if (service) {
      const client = this.serviceClient;
      consumer
        .apply((req: IncomingRequest, res: ServerResponse) => void client.handle(req, res))
        .forRoutes({ path: service.callbackPath, method: RequestMethod.POST });
    }
    if (scheduler) {
      // The calls of applications without Redis (service.url), signed like deliveries.
      const server = this.serviceScheduler;
      consumer
        .apply((req: IncomingRequest, res: ServerResponse) => void server.handleClientCall(req, res))
        .forRoutes({ path: scheduler.clientPath, method: RequestMethod.POST });
    }
  }
}
