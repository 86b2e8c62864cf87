/**
 * nestjs-distributed-queue: distributed delay and ordered (route) queues for NestJS on Redis.
 * The public API is what the README documents: the module, the two services, the decorator, the option,
 * task and result types, and the errors.
 */
export { DistributedQueueModule } from './distributed-queue.module';
export { TaskSubmitService } from './services/task-submit.service';
export { TaskInspectorService } from './services/task-inspector.service';
export { QueueControlService } from './services/queue-control.service';
export { TaskGroupsService } from './services/task-groups.service';
export { TaskFlowService } from './services/task-flow.service';
export type { FlowEndedEvent, FlowEndedListener } from './flow/flow-events';
export {
  DistributedQueueHealthIndicator, type DistributedQueueHealthDetail, type DistributedQueueHealthResult, type HealthCheckOptions,
} from './health/distributed-queue.health';
export type { HealthCheckDetail } from './health/health-checks';
export { defineTask, typeOf, type PayloadOf, type TaskContract, type TypedTaskWorkerDecorator } from './contracts';
export * from './decorators';
export * from './errors';
export * from './interfaces';
export { DistributedQueueDashboardModule } from './dashboard/dashboard.module';
export type { DashboardOptions } from './dashboard/dashboard-options';
export type * from './dashboard/dashboard-api';
export { TaskHistoryService } from './history/task-history.service';
export type { HistoryEvent, TaskHistoryRecord } from './history/history-event';
export type { HistorySearch, HistoryPage } from './history/history-search';
export type { HistoryStatus } from './history/history-event';
export { ServiceScheduler } from './service/service-scheduler';
export type { ServiceInstance, ServiceTypeOptions } from './service/service-registry';
export {
  DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signDelivery, verifyDelivery, type DeliveryBatch, type DeliveryBody, type DeliveryResult,
} from './service/delivery-signature';
export { TaskScheduleService } from './cron/task-schedule.service';
export { MIN_EVERY_MS } from './cron/schedule-definition';
export { MAX_MESSAGE_BYTES, MAX_STACK_BYTES } from './runtime/error-stack';
