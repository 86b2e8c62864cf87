export * from './module-options.interface';
export * from './task.interface';
export * from './task-worker-options.interface';
export * from './route-options.interface';
