import { Injectable, Logger } from '@nestjs/common';
import { Task, TaskHandler, TaskWorker } from 'nestjs-distributed-queue';
import { CLOSE_ORDER_TASK, CloseOrderPayload } from './order';
import { OrdersStore } from './orders.store';

/** Closes an order that is still pending when its close task comes due. Paid orders are left alone. */
@TaskWorker(CLOSE_ORDER_TASK, { concurrency: 10, timeoutMs: 10_000 })
@Injectable()
export class CloseOrderWorker implements TaskHandler<CloseOrderPayload> {
  private readonly logger = new Logger(CloseOrderWorker.name);

  constructor(private readonly store: OrdersStore) {}

  async handle(task: Task<CloseOrderPayload>): Promise<void> {
    const orderId = task.payload?.orderId;
    if (typeof orderId !== 'string') {
      this.logger.warn(`Task ${task.id}: payload has no orderId; nothing to close`);
      return;
    }
    const result = await this.store.leavePending(orderId, 'closed');
    if (result.outcome === 'moved') this.logger.log(`Closed order ${orderId}: not paid in time`);
    else if (result.outcome === 'not-pending') this.logger.log(`Order ${orderId} is already ${result.order.status}: left alone`);
    else this.logger.warn(`Order ${orderId} not found: nothing to close`);
  }
}
