/**
 * nestjs-distributed-queue: distributed delay and ordered (route) queues for NestJS on Redis.
 * The public API is what the README documents: the module, the two services, the decorator, the option,
 * task and result types, and the errors.
 */
export { DistributedQueueModule } from './distributed-queue.module';
export { TaskSubmitService } from './services/task-submit.service';
export { TaskInspectorService } from './services/task-inspector.service';
export { QueueControlService } from './services/queue-control.service';
export { defineTask, typeOf, type PayloadOf, type TaskContract, type TypedTaskWorkerDecorator } from './contracts';
export * from './decorators';
export * from './errors';
export * from './interfaces';
