export {
  defineTask, isTaskContract, typeOf,
  type PayloadOf, type TaskContract, type TaskWorkerClass, type TypedTaskWorkerDecorator,
} from './task-contract';
