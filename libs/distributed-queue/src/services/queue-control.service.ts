import { Injectable } from '@nestjs/common';
import { checkedTypeOf, type TaskContract } from '../contracts/task-contract';
import { DelayQueueStore } from '../delay/delay-queue.store';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { InvalidArgumentError } from '../errors';

/** Steers the queues for the whole fleet: pause and resume a delay-queue type. Injectable anywhere. */
@Injectable()
export class QueueControlService {
  constructor(
    private readonly store: DelayQueueStore,
    private readonly explorer: DistributedQueueExplorer,
  ) {}

  /**
   * Pauses a type in Redis: every instance stops starting its tasks at its next fetch (within one poll
   * interval); running tasks finish; submits, cancels and reschedules go on; the pause survives restarts.
   * @throws InvalidArgumentError for an ordered type (pausing a route queue is not there yet)
   */
  async pause(type: string | TaskContract<unknown>): Promise<void> {
    await this.store.setPaused(this.delayType(type), true);
  }

  /** Resumes a paused type and wakes its workers at once. */
  async resume(type: string | TaskContract<unknown>): Promise<void> {
    await this.store.setPaused(this.delayType(type), false);
  }

  /** Whether a type is paused. */
  async isPaused(type: string | TaskContract<unknown>): Promise<boolean> {
    return this.store.isPaused(this.delayType(type));
  }

  private delayType(type: string | TaskContract<unknown>): string {
    const name = checkedTypeOf(type);
    if (this.explorer.isOrdered(name)) throw new InvalidArgumentError('type', `"${name}" is ordered: pausing the route queue is not supported yet`);
    return name;
  }
}
