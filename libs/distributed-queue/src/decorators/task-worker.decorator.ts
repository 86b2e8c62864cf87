import { SetMetadata } from '@nestjs/common';
import { TASK_WORKER_METADATA } from '../distributed-queue.constants';
import type { TaskWorkerOptions } from '../interfaces';
import { assertTaskType } from '../options/resolve-options';

/** What `@TaskWorker` records on a class. */
export interface TaskWorkerMetadata {
  type: string;
  options: TaskWorkerOptions;
}

/**
 * Marks a provider as the handler of one task type. The class implements `TaskHandler`
 * (`handle(task, signal)`) and must be listed in a module's providers. Options override the module's
 * `types[type]` and `defaults`.
 *
 * @example
 * ```ts
 * @TaskWorker('order.close', { concurrency: 10, timeoutMs: 5000 })
 * export class CloseOrderWorker implements TaskHandler<{ orderId: string }> {
 *   async handle(task: Task<{ orderId: string }>, signal: AbortSignal) { ... }
 * }
 * ```
 */
export function TaskWorker(type: string, options: TaskWorkerOptions = {}): ClassDecorator {
  assertTaskType(type);
  return SetMetadata<string, TaskWorkerMetadata>(TASK_WORKER_METADATA, { type, options });
}
