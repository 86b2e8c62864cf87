/**
 * nestjs-distributed-queue/testing: `DistributedQueueTestingModule`, an in-memory engine with the real
 * services for an application's unit tests, and `TestQueue`, the test's handle on it.
 */
export { DistributedQueueTestingModule } from './testing.module';
export { TestQueue, type RunTaskOptions } from './test-queue';
export type { DistributedQueueTestingOptions } from './testing-options';
export type { TestingMode } from './test-clock';
export type { SubmittedTask } from './memory-engine';
export type { PayloadMatcher } from './submitted-matcher';
