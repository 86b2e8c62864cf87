/** Metadata key of `@TaskWorker`. */
export const TASK_WORKER_METADATA = 'distributed-queue:task-worker';
/** Injection token of the shared Redis client for commands. */
export const DISTRIBUTED_QUEUE_REDIS = Symbol('DISTRIBUTED_QUEUE_REDIS');
/** Injection token of the resolved module options. */
export const DISTRIBUTED_QUEUE_RESOLVED_OPTIONS = Symbol('DISTRIBUTED_QUEUE_RESOLVED_OPTIONS');

/** Name under which a type's safety poll is registered in the SchedulerRegistry. */
export const pollIntervalName = (type: string): string => `distributed-queue:poll:${type}`;
/** Name under which a type's lease renewal is registered in the SchedulerRegistry. */
export const leaseIntervalName = (type: string): string => `distributed-queue:lease:${type}`;
