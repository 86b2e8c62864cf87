import { TaskEventBus } from '../events/task-event-bus';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import {
  DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, DURABLE_ACKS, FLOW_PROGRESS, ROUTE_STORE, routeHeartbeatName, routeRebalanceName,
} from '../distributed-queue.constants';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { closeRedisClient } from '../redis/redis-connection';
import type { AckDurability } from '../redis/ack-durability';
import type { RedisClient } from '../redis/script-loader';
import { EventSubscriber } from '../runtime/event-subscriber';
import { StartupSteps } from '../runtime/startup-steps';
import type { OrderedWorker } from './partition-runner';
import type { FlowProgress } from '../flow/flow-progress';
import { RouteMachine } from './route-machine';
import { ensureTopology } from './route-topology';
import type { RouteStore } from './route.store';

/**
 * Runs the route queue's membership: makes sure the partitions exist (every application, producers too),
 * and where ordered workers exist joins as a machine with heartbeat and rebalance registered as interval
 * jobs of @nestjs/schedule (SchedulerRegistry); leaves before shutdown.
 */
@Injectable()
export class RouteOrchestrator implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('DistributedQueue');
  private machine?: RouteMachine;
  private stopReconnectHook?: () => void;

  constructor(
    private readonly explorer: DistributedQueueExplorer,
    private readonly scheduler: SchedulerRegistry,
    private readonly subscriber: EventSubscriber,
    private readonly events: TaskEventBus,
    @Inject(ROUTE_STORE) private readonly store: RouteStore | null,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    private readonly startup: StartupSteps,
    @Inject(DISTRIBUTED_QUEUE_REDIS) private readonly redis: RedisClient,
    @Inject(DURABLE_ACKS) private readonly durableAcks: AckDurability | null,
    @Inject(FLOW_PROGRESS) private readonly flows: FlowProgress | null,
  ) {}

  /** This application's machine, when it runs ordered workers. */
  get routeMachine(): RouteMachine | undefined {
    return this.machine;
  }

  onApplicationBootstrap(): Promise<void> {
    if (!this.store) return Promise.resolve();
    return this.startup.run('route queue', () => this.join()).catch(async (error: unknown) => {
      // NOTE: Nest cannot close an application whose bootstrap failed: close our connections ourselves.
      await Promise.all([this.subscriber.onApplicationShutdown(), closeRedisClient(this.redis)]);
      throw error;
    });
  }

  private async join(): Promise<void> {
    if (!this.store) return;
    const workers = new Map<string, OrderedWorker>(
      this.explorer.getWorkers().filter((w) => w.options.ordered).map((w) => [w.type, { handler: w.handler, options: w.options }]),
    );
    if (workers.size === 0) {
      await ensureTopology(this.store, this.store.options.partitions);
      return;
    }
    // NOTE: a step that failed part-way runs again (waitForRedis): the machine is made once.
    const machine = this.machine ?? new RouteMachine(this.store, workers, this.logger, this.events, this.durableAcks, this.flows);
    if (!this.machine) {
      this.machine = machine;
      // NOTE: after a reconnect, messages may have been missed: a heartbeat looks at every partition again,
      // and every runner takes again (an idle one may sleep up to 10 s before its safety take).
      this.stopReconnectHook = this.subscriber.onReconnect(() => {
        machine.requestHeartbeat();
        machine.wakeAll();
      });
    }
    await this.subscriber.subscribe(this.store.keys.events, (message) => machine.onEvent(message));
    await machine.start();
    const { heartbeatMs, rebalanceMs, qId } = this.store.options;
    this.scheduler.addInterval(routeHeartbeatName(qId), setInterval(() => void machine.heartbeat(), heartbeatMs));
    this.scheduler.addInterval(routeRebalanceName(qId), setInterval(() => void machine.rebalance(), rebalanceMs));
    this.logger.log(`Route queue "${qId}": machine ${machine.id} joined for ${[...workers.keys()].join(', ')}`);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.startup.halt();
    if (!this.machine) return;
    // NOTE: the heartbeat and rebalance jobs stay registered: a stopped machine ignores their ticks, and the
    // ScheduleModule clears its registry when the application shuts down.
    this.stopReconnectHook?.();
    await this.machine.stop(this.options.shutdownTimeoutMs);
  }
}
