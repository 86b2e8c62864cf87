import { ConflictException, Inject, Injectable, Logger, NotFoundException } from '@nestjs/common';
import { CancelResult, TaskInfo, TaskInspectorService, TaskSubmitService } from 'nestjs-distributed-queue';
import { APP_CONFIG, AppConfig } from '../app.config';
import { CreateOrderInput } from './create-order.input';
import { CLOSE_ORDER_TASK, CloseOrderPayload, Order } from './order';
import { OrdersStore } from './orders.store';

export type CreatedOrder = Order & { closeTaskId: string; closesAt: string };
/** `closeTaskCancel` is 'error' when the payment went through but the cancel call failed (harmless: the worker leaves paid orders alone). */
export type PaidOrder = Order & { closeTaskCancel: CancelResult | 'error' };
export type OrderView = Order & { closeTask: TaskInfo<CloseOrderPayload> };

@Injectable()
export class OrdersService {
  private readonly logger = new Logger(OrdersService.name);

  constructor(
    private readonly store: OrdersStore,
    private readonly tasks: TaskSubmitService,
    private readonly inspector: TaskInspectorService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Stores a pending order and schedules its close; the task id is the order id. */
  async create({ item, amount, closeAfterMs = this.config.closeAfterMs }: CreateOrderInput): Promise<CreatedOrder> {
    const order = await this.store.create(item, amount);
    let closeTaskId: string;
    try {
      closeTaskId = await this.tasks.submit<CloseOrderPayload>(CLOSE_ORDER_TASK, { orderId: order.id }, { id: order.id, delay: closeAfterMs });
    } catch (error) {
      await this.store.delete(order.id).catch(() => undefined);
      throw error;
    }
    const closesAt = new Date(Date.parse(order.createdAt) + closeAfterMs).toISOString();
    return { ...order, closeTaskId, closesAt };
  }

  /** pending -> paid, then cancels the close task. */
  async pay(id: string): Promise<PaidOrder> {
    const result = await this.store.leavePending(id, 'paid');
    if (result.outcome === 'not-found') throw new NotFoundException(`Order ${id} not found`);
    if (result.outcome === 'not-pending') {
      throw new ConflictException(`Order ${id} is ${result.order.status}: only a pending order can be paid`);
    }
    let closeTaskCancel: PaidOrder['closeTaskCancel'];
    try {
      closeTaskCancel = await this.tasks.cancel(CLOSE_ORDER_TASK, id);
    } catch (error) {
      this.logger.warn(`Order ${id} is paid but cancelling its close task failed: ${(error as Error).message}`);
      closeTaskCancel = 'error';
    }
    return { ...result.order, closeTaskCancel };
  }

  async get(id: string): Promise<OrderView> {
    const order = await this.store.get(id);
    if (!order) throw new NotFoundException(`Order ${id} not found`);
    return { ...order, closeTask: await this.inspector.getTask<CloseOrderPayload>(CLOSE_ORDER_TASK, id) };
  }
}
