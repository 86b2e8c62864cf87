/** Metadata key of `@TaskWorker`. */
export const TASK_WORKER_METADATA = 'distributed-queue:task-worker';
/** Injection token of the shared Redis client for commands. */
export const DISTRIBUTED_QUEUE_REDIS = Symbol('DISTRIBUTED_QUEUE_REDIS');
/** Injection token of the route queue store (null without the `route` option). */
export const ROUTE_STORE = Symbol('ROUTE_STORE');
/** Injection token of the `TaskTracer` (null without the `tracing` option). */
export const TASK_TRACER = Symbol('TASK_TRACER');
/** Injection token of the `SchedulerRpcClient` (service mode with `service.url`; else null). */
export const SCHEDULER_RPC = Symbol('SCHEDULER_RPC');
/** Injection token of the `DurableWrites` (the module option `durability`; else null: no connection is opened). */
export const DURABLE_WRITES = Symbol('DURABLE_WRITES');
/** Injection token of the `AckDurability` of workers' acks (with `DURABLE_WRITES`; else null). */
export const DURABLE_ACKS = Symbol('DURABLE_ACKS');
/** Injection token of the resolved module options. */
export const DISTRIBUTED_QUEUE_RESOLVED_OPTIONS = Symbol('DISTRIBUTED_QUEUE_RESOLVED_OPTIONS');

/** Name under which the route queue's heartbeat is registered in the SchedulerRegistry. */
export const routeHeartbeatName = (qId: string): string => `distributed-queue:route-heartbeat:${qId}`;
/** Name under which the route queue's scheduler round is registered in the SchedulerRegistry. */
export const routeRebalanceName = (qId: string): string => `distributed-queue:route-rebalance:${qId}`;
/** The internal delay-queue type that holds delayed ordered tasks until they are due. */
export const routeDelayType = (qId: string): string => `__route__.${qId}`;
/** The internal delay-queue type of schedule ticks (one task per schedule: its next tick). */
export const CRON_TICK_TYPE = '__cron__';
/** The internal delay-queue type whose tasks run a `@DistributedCron` method. */
export const cronRunType = (schedule: string): string => `__cron__.${schedule}`;
/** Metadata key of `@DistributedCron`. */
export const DISTRIBUTED_CRON_METADATA = 'distributed-queue:distributed-cron';
/** Whether `type` is one of the library's own (internal) delay-queue types. */
export const isInternalType = (type: string): boolean => type.startsWith('__route__.') || type.startsWith('__cron__');
/** Injection token of the `FlowProgress` (null without Redis: `service.url`). */
export const FLOW_PROGRESS = Symbol('FLOW_PROGRESS');
