import type { LoggerService } from '@nestjs/common';
import type { TaskEventBus } from '../events/task-event-bus';
import type { TaskHandler } from '../interfaces';
import type { ResolvedWorkerOptions } from '../options/resolve-options';
import type { AckDurability } from '../redis/ack-durability';
import type { FlowProgress } from '../flow/flow-progress';
import type { SharedTimeouts } from '../runtime/shared-timeouts';
import type { PartitionRunner } from './partition-runner';
import type { RouteStore } from './route.store';
import type { Slots } from './slots';

/** An ordered worker: its handler and options. */
export interface OrderedWorker {
  handler: TaskHandler;
  options: ResolvedWorkerOptions;
}

/** What a runner needs from its machine. */
export interface RunnerContext {
  store: RouteStore;
  me: string;
  workers: Map<string, OrderedWorker>;
  /** Per ordered type: its handlers running at once in this process, over all the machine's partitions. */
  slots: Map<string, Slots>;
  /** Per ordered type: the timeouts of its attempts (one timer per group of attempts started together). */
  timeouts: Map<string, SharedTimeouts>;
  logger: LoggerService;
  /** True while this machine's claim on the partition is fresh enough to start new work. */
  leaseFresh(partition: number): boolean;
  /** Called when the loop ended (lost, released or stopped). */
  onEnd(runner: PartitionRunner): void;
  /** Where lifecycle events of the tasks run here go. */
  events?: TaskEventBus;
  /** With the module option `durability`: acks are confirmed by replicas before their events. */
  durableAcks?: AckDurability;
  /** Flow nodes' hooks (see `FlowProgress`). */
  flows?: FlowProgress;
}
