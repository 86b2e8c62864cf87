import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS } from '../distributed-queue.constants';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { TaskEventBus } from '../events/task-event-bus';
import { TaskScheduleService } from '../cron/task-schedule.service';
import { HistoryWriter } from '../history/history-writer';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { closeRedisClient } from '../redis/redis-connection';
import type { RedisClient } from '../redis/script-loader';
import { readServerMemory } from '../redis/server-memory';
import { describeTarget } from '../redis/bounded-calls';
import { RouteOrchestrator } from '../route/route.orchestrator';
import { EventSubscriber } from '../runtime/event-subscriber';
import { QueueControlService } from '../services/queue-control.service';
import { TaskGroupsService } from '../services/task-groups.service';
import { TaskInspectorService } from '../services/task-inspector.service';
import { loadPromClient } from './prom-client.loader';
import { attachQueueStateGauges } from './queue-state-gauges';
import { QueueStateReader, type QueueStateSnapshot } from './queue-state.reader';
import { attachTaskEventMetrics } from './task-event-metrics';

/**
 * Prometheus metrics (module option `metrics`): at init, loads prom-client and registers the counters,
 * histograms and scrape-time gauges in the option's registry (else prom-client's global one), reusing
 * metrics of the same name already there; at shutdown, stops feeding them. Does nothing when `metrics` is off.
 */
@Injectable()
export class DistributedQueueMetrics implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('DistributedQueue');
  private detach: (() => void)[] = [];

  constructor(
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    private readonly bus: TaskEventBus,
    private readonly inspector: TaskInspectorService,
    private readonly explorer: DistributedQueueExplorer,
    private readonly route: RouteOrchestrator,
    private readonly subscriber: EventSubscriber,
    @Inject(DISTRIBUTED_QUEUE_REDIS) private readonly redis: RedisClient,
    private readonly historyWriter: HistoryWriter,
    private readonly schedules: TaskScheduleService,
    private readonly control: QueueControlService,
    private readonly groups: TaskGroupsService,
  ) {}

  async onModuleInit(): Promise<void> {
    const metrics = this.options.metrics;
    if (!metrics) return;
    let client;
    try {
      client = loadPromClient();
    } catch (error) {
      // NOTE: Nest cannot close an application whose init failed: close our connections ourselves.
      await Promise.all([this.subscriber.onApplicationShutdown(), closeRedisClient(this.redis)]);
      throw error;
    }
    const registry = (metrics.registry ?? client.register) as Registry;
    const reader = new QueueStateReader(() => this.readState(), this.logger);
    this.detach = [attachTaskEventMetrics(registry, metrics, this.bus)];
    // NOTE: queue state is read from Redis, which an application with service.url does not reach.
    if (!this.options.service?.url) this.detach.push(attachQueueStateGauges(client, registry, metrics, reader));
  }

  onApplicationShutdown(): void {
    this.detach.forEach((detach) => detach());
    this.detach = [];
  }

  /** Every type this application knows (its workers and `types`), but the library's internal ones. */
  private knownTypes(): string[] {
    return this.explorer.knownTypes().filter((type) => this.options.route !== undefined || !this.explorer.isOrdered(type));
  }

  private async readState(): Promise<QueueStateSnapshot> {
    const known = this.knownTypes();
    const delayTypes = known.filter((type) => !this.explorer.isOrdered(type));
    const [tasks, limits, groups, status, history, schedules, memory] = await Promise.all([
      this.inspector.getCountsOf(known).then((counts) => [...counts].map(([type, c]) => ({ type, counts: c }))),
      Promise.all(delayTypes.map(async (type) => ({ type, limits: await this.control.getLimits(type) }))),
      // NOTE: the top group only: O(log n) per type, however many groups it has.
      Promise.all(delayTypes.map(async (type) => {
        const { total, groups: top } = await this.groups.getGroups(type, { limit: 1 });
        return { type, waiting: total, backlogMax: top[0]?.waiting ?? 0 };
      })),
      this.options.route ? this.inspector.getRouteStatus() : undefined,
      this.options.history ? this.historyWriter.backlog() : undefined,
      this.schedules.list(),
      // NOTE: INFO may be refused (an ACL without it): the memory gauges are then left out, the rest shown.
      readServerMemory(this.redis, describeTarget(this.options.connection)).catch(() => undefined),
    ]);
    if (!status) return { tasks, limits, groups, history, schedules, memory };
    const machine = this.route.routeMachine?.id;
    const partitionsOwned = machine === undefined ? undefined : status.partitions.filter((p) => p.owner === machine).length;
    return { tasks, limits, groups, history, schedules, memory, route: { queue: status.qId, machinesLive: status.machines.length, machine, partitionsOwned } };
  }
}
