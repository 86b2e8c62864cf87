export { TaskWorker } from './task-worker.decorator';
