import { SetMetadata } from '@nestjs/common';
import { TASK_WORKER_METADATA } from '../distributed-queue.constants';
import { isTaskContract, type TaskContract, type TypedTaskWorkerDecorator } from '../contracts/task-contract';
import { InvalidOptionsError } from '../errors';
import type { TaskWorkerOptions } from '../interfaces';
import { assertDeclaredType } from '../options/resolve-options';

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
export function TaskWorker(type: string, options?: TaskWorkerOptions): ClassDecorator;
/**
 * Marks a provider as the handler of a contract's task type (see `defineTask`). The compiler checks that
 * the class's `handle` takes the contract's payload. The contract's `ordered` is the worker's `ordered`
 * (it overrides `types[type].ordered`); an `ordered` option, if given, must agree with it.
 *
 * @example
 * ```ts
 * export const CloseOrder = defineTask<{ orderId: string }>('order.close');
 *
 * @TaskWorker(CloseOrder, { concurrency: 10 })
 * export class CloseOrderWorker implements TaskHandler<PayloadOf<typeof CloseOrder>> {
 *   async handle(task: Task<PayloadOf<typeof CloseOrder>>, signal: AbortSignal) { ... }
 * }
 * ```
 */
export function TaskWorker<P, O extends boolean>(
  contract: TaskContract<P, O>,
  options?: TaskWorkerOptions & { ordered?: NoInfer<O> },
): TypedTaskWorkerDecorator<P>;
export function TaskWorker(type: string | TaskContract<unknown, boolean>, options: TaskWorkerOptions = {}): ClassDecorator {
  if (isTaskContract(type)) {
    // NOTE: options that are not an object are left for the explorer to report, as with a type string.
    if (typeof options === 'object' && options !== null && !Array.isArray(options)) {
      if (options.ordered !== undefined && options.ordered !== type.ordered) {
        throw new InvalidOptionsError(`@TaskWorker('${type.type}').ordered`, `must agree with the contract (ordered: ${type.ordered})`);
      }
      options = { ...options, ordered: type.ordered };
    }
    type = type.type;
  }
  assertDeclaredType(type);
  return SetMetadata<string, TaskWorkerMetadata>(TASK_WORKER_METADATA, { type, options });
}
