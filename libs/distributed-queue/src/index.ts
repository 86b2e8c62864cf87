export { DistributedQueueModule } from './distributed-queue.module';
export { DISTRIBUTED_QUEUE_MODULE_OPTIONS } from './distributed-queue.module-definition';
export { leaseIntervalName, pollIntervalName } from './distributed-queue.constants';
export { TaskSubmitService } from './delay/task-submit.service';
export * from './decorators';
export * from './errors';
export * from './interfaces';
export { delayQueueKeys, type DelayQueueKeys } from './redis/queue-keys';
