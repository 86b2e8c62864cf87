import type { TaskContract } from '../contracts/task-contract';
import type { DistributedQueueExplorer } from '../distributed-queue.explorer';

/** Whether a type is ordered: a contract says so itself; a type string by its worker here or the `types` option. */
export function isOrderedType(explorer: DistributedQueueExplorer, type: string | TaskContract<unknown, boolean>): boolean {
  return typeof type === 'string' ? explorer.isOrdered(type) : type.ordered;
}
