export * from './task-worker.decorator';
