export { TaskWorker } from './task-worker.decorator';
export { OnTaskEvent } from './on-task-event.decorator';
export { DistributedCron, type CronRun } from './distributed-cron.decorator';
