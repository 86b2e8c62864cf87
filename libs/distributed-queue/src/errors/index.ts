export * from './distributed-queue.error';
