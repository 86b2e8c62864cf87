/**
 * Unit tests of the orders sample (no Redis): `CloseOrderWorker` and `OrdersService` on
 * `DistributedQueueTestingModule` (the real TaskSubmitService / TaskInspectorService on an in-memory engine),
 * with `OrdersStore` replaced by an in-memory store that keeps the Lua script's rule: an order leaves
 * 'pending' once, to paid or to closed.
 */
import { Logger } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TaskInspectorService, TaskSubmitService } from 'nestjs-distributed-queue';
import { DistributedQueueTestingModule, TestQueue } from 'nestjs-distributed-queue/testing';
import { AppConfigModule } from '../app.config';
import { CloseOrderWorker } from './close-order.worker';
import { CLOSE_ORDER_TASK, type CloseOrderPayload, type Order } from './order';
import { OrdersService } from './orders.service';
import { OrdersStore, type LeavePendingResult } from './orders.store';

/** OrdersStore's contract in memory (the real one is a Redis hash per order and one Lua script). */
class InMemoryOrdersStore {
  readonly orders = new Map<string, Order>();
  private next = 0;
  /** Makes the next `leavePending` calls reject (Redis down). */
  failing = 0;

  async create(item: string, amount: number): Promise<Order> {
    const order: Order = { id: `order-${++this.next}`, item, amount, status: 'pending', createdAt: new Date().toISOString() };
    this.orders.set(order.id, order);
    return { ...order };
  }

  async get(id: string): Promise<Order | null> {
    const order = this.orders.get(id);
    return order ? { ...order } : null;
  }

  async delete(id: string): Promise<void> {
    this.orders.delete(id);
  }

  async leavePending(id: string, status: 'paid' | 'closed'): Promise<LeavePendingResult> {
    if (this.failing > 0) {
      this.failing--;
      throw new Error('Connection is closed.');
    }
    const order = this.orders.get(id);
    if (!order) return { outcome: 'not-found' };
    if (order.status !== 'pending') return { outcome: 'not-pending', order: { ...order } };
    order.status = status;
    order[status === 'paid' ? 'paidAt' : 'closedAt'] = new Date().toISOString();
    return { outcome: 'moved', order: { ...order } };
  }
}

const CLOSE_AFTER_MS = 30_000;

describe('orders sample (testing module, no Redis)', () => {
  let moduleRef: TestingModule;
  let queue: TestQueue;
  let store: InMemoryOrdersStore;

  beforeAll(() => {
    // The worker and the service log every close and failed cancel: keep the test output quiet.
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterAll(() => jest.restoreAllMocks());

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [
        AppConfigModule.register({ redisUrl: 'redis://unused.invalid:1', closeAfterMs: CLOSE_AFTER_MS }),
        DistributedQueueTestingModule.forRoot({ keyPrefix: 'orders-sample' }),
      ],
      providers: [OrdersService, CloseOrderWorker, { provide: OrdersStore, useClass: InMemoryOrdersStore }],
    }).compile();
    await moduleRef.init();
    queue = moduleRef.get(TestQueue);
    store = moduleRef.get<InMemoryOrdersStore>(OrdersStore);
  });
  afterEach(() => moduleRef.close());

  const pending = async (item = 'book'): Promise<Order> => store.create(item, 12.5);

  describe('CloseOrderWorker', () => {
    it('closes a pending order', async () => {
      const order = await pending();
      await queue.runTask<void, CloseOrderPayload>(CLOSE_ORDER_TASK, { orderId: order.id }, { id: order.id });
      expect(store.orders.get(order.id)).toMatchObject({ status: 'closed', closedAt: expect.any(String) });
    });

    it('leaves a paid order alone', async () => {
      const order = await pending();
      await store.leavePending(order.id, 'paid');
      await queue.runTask(CLOSE_ORDER_TASK, { orderId: order.id });
      expect(store.orders.get(order.id)).toMatchObject({ status: 'paid' });
      expect(store.orders.get(order.id)?.closedAt).toBeUndefined();
    });

    it('completes without closing anything for an unknown order or a payload without orderId', async () => {
      await expect(queue.runTask(CLOSE_ORDER_TASK, { orderId: 'nope' })).resolves.toBeUndefined();
      await expect(queue.runTask(CLOSE_ORDER_TASK, {})).resolves.toBeUndefined();
      await expect(queue.runTask(CLOSE_ORDER_TASK, null)).resolves.toBeUndefined();
    });

    it('through the queue: a close task runs when it falls due', async () => {
      const order = await pending();
      const submit = moduleRef.get(TaskSubmitService);
      await submit.submit<CloseOrderPayload>(CLOSE_ORDER_TASK, { orderId: order.id }, { id: order.id, delay: 5_000 });
      expect(await queue.runDue()).toBe(0);
      expect(store.orders.get(order.id)?.status).toBe('pending');
      expect(await queue.advanceBy(5_000)).toBe(1);
      expect(store.orders.get(order.id)?.status).toBe('closed');
      expect(await moduleRef.get(TaskInspectorService).getState(CLOSE_ORDER_TASK, order.id)).toBe('done');
    });

    it('a store failure is retried with backoff (3 attempts by default), then dead-lettered', async () => {
      const order = await pending();
      const submit = moduleRef.get(TaskSubmitService);
      const inspector = moduleRef.get(TaskInspectorService);
      store.failing = 1;
      await submit.submit<CloseOrderPayload>(CLOSE_ORDER_TASK, { orderId: order.id }, { id: order.id });
      expect(await queue.runDue()).toBe(1);
      expect(await inspector.getTask(CLOSE_ORDER_TASK, order.id)).toMatchObject({ state: 'delayed', attempts: 1, lastError: { message: 'Connection is closed.' } });
      // default backoff: exponential from 1 s with up to 20 % jitter (shorter, never longer): 1 s covers it
      expect(await queue.advanceBy(1_000)).toBe(1);
      expect(store.orders.get(order.id)?.status).toBe('closed');

      const other = await pending('lamp');
      store.failing = 3;
      await submit.submit<CloseOrderPayload>(CLOSE_ORDER_TASK, { orderId: other.id }, { id: other.id });
      expect(await queue.drain()).toBe(3);
      const dead = await inspector.listDead<CloseOrderPayload>(CLOSE_ORDER_TASK);
      expect(dead.total).toBe(1);
      expect(dead.tasks[0]).toMatchObject({ id: other.id, payload: { orderId: other.id }, error: { message: 'Connection is closed.', attempts: 3 } });
      expect(store.orders.get(other.id)?.status).toBe('pending');
    });
  });

  describe('OrdersService', () => {
    it('create stores a pending order and submits its close task, id = order id, delayed by closeAfterMs', async () => {
      const orders = moduleRef.get(OrdersService);
      const created = await orders.create({ item: 'book', amount: 12.5 });
      expect(created).toMatchObject({ item: 'book', amount: 12.5, status: 'pending', closeTaskId: created.id });
      expect(Date.parse(created.closesAt) - Date.parse(created.createdAt)).toBe(CLOSE_AFTER_MS);
      queue.expectSubmitted<CloseOrderPayload>(CLOSE_ORDER_TASK, { orderId: created.id }, 1);
      expect(queue.getSubmitted(CLOSE_ORDER_TASK)).toEqual([
        expect.objectContaining({ id: created.id, payload: { orderId: created.id }, dueAt: queue.now() + CLOSE_AFTER_MS }),
      ]);
    });

    it("create takes the body's closeAfterMs over the app's", async () => {
      const created = await moduleRef.get(OrdersService).create({ item: 'pen', amount: 1, closeAfterMs: 1_000 });
      queue.expectSubmitted(CLOSE_ORDER_TASK, (_payload, task) => task.id === created.id && task.dueAt === queue.now() + 1_000);
    });

    it('create deletes the order again when the submit fails', async () => {
      const submit = moduleRef.get(TaskSubmitService);
      jest.spyOn(submit, 'submit').mockRejectedValueOnce(new Error('Redis down'));
      await expect(moduleRef.get(OrdersService).create({ item: 'book', amount: 2 })).rejects.toThrow('Redis down');
      expect(store.orders.size).toBe(0);
      queue.expectNotSubmitted(CLOSE_ORDER_TASK);
    });

    it('an order not paid in time is closed when its close task comes due', async () => {
      const orders = moduleRef.get(OrdersService);
      const { id } = await orders.create({ item: 'book', amount: 12.5 });
      expect((await orders.get(id)).closeTask.state).toBe('delayed');
      await queue.advanceBy(CLOSE_AFTER_MS - 1);
      expect((await orders.get(id)).status).toBe('pending');
      await queue.advanceBy(1);
      expect(await orders.get(id)).toMatchObject({ status: 'closed', closeTask: { state: 'done' } });
      await expect(orders.pay(id)).rejects.toThrow(/is closed: only a pending order can be paid/);
    });

    it('pay moves the order to paid and cancels its close task: nothing runs later', async () => {
      const orders = moduleRef.get(OrdersService);
      const { id } = await orders.create({ item: 'book', amount: 12.5 });
      expect(await orders.pay(id)).toMatchObject({ status: 'paid', closeTaskCancel: 'cancelled' });
      expect(await queue.advanceBy(CLOSE_AFTER_MS)).toBe(0);
      expect(await orders.get(id)).toMatchObject({ status: 'paid', closeTask: { state: 'unknown' } });
      await expect(orders.pay('nope')).rejects.toThrow('Order nope not found');
    });
  });
});
