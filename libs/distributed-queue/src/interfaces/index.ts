export * from './module-options.interface';
export * from './task.interface';
export * from './task-worker-options.interface';
export * from './route-options.interface';
export * from './task-event.interface';
export * from './observability-options.interface';
export * from './queue-control.interface';
export * from './history-options.interface';
