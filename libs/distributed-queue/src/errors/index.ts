export * from './distributed-queue.error';
export * from './queue-in-use.error';
export * from './history-schema.error';
export * from './type-owned.error';
export * from './delivery-failed.error';
export { httpErrorOf } from './http-status';
export * from './service-url.error';
export * from './redis-unavailable.error';
export * from './redis-memory.error';
