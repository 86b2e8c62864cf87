import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';
import { httpCall, startSampleApp, type Reply, type SampleApp } from './support/http';

/** The orders sample app (apps/orders) over HTTP, against the standalone test Redis. */
const single = getTargets().find((t) => t.name === 'single');
const redisUrl = typeof single?.connection === 'string' ? single.connection : undefined;


(redisUrl ? describe : describe.skip)('orders sample app', () => {
  const keyPrefix = uniquePrefix('orders-app');
  let sample: SampleApp | undefined;
  let app: INestApplication;
  let base: string;
  let redis: Redis;

  const call = (method: 'GET' | 'POST', path: string, body?: unknown): Promise<Reply> => httpCall(base, method, path, body);

  async function createOrder(body: Record<string, unknown>): Promise<any> {
    const reply = await call('POST', '/orders', body);
    expect(reply.status).toBe(201);
    return reply.body;
  }

  beforeAll(async () => {
    sample = await startSampleApp({ redisUrl: redisUrl!, keyPrefix, closeAfterMs: 60_000, dashboardToken: 'sample-dashboard-token' });
    ({ app, base, redis } = sample);
  });

  afterAll(async () => {
    await sample?.close();
  });

  it('closes an unpaid order when its close task comes due', async () => {
    const created = await createOrder({ item: 'book', amount: 12.5, closeAfterMs: 300 });
    expect(created).toMatchObject({ item: 'book', amount: 12.5, status: 'pending', closeTaskId: created.id });
    expect(Date.parse(created.closesAt) - Date.parse(created.createdAt)).toBe(300);
    expect(await redis.hget(`${keyPrefix}:order:${created.id}`, 'status')).toBe('pending');

    const pending = await call('GET', `/orders/${created.id}`);
    expect(pending.status).toBe(200);
    expect(pending.body.closeTask).toMatchObject({ id: created.id, type: 'order.close', payload: { orderId: created.id } });
    expect(['delayed', 'ready', 'running']).toContain(pending.body.closeTask.state);

    const closed = await waitFor(
      async () => {
        const { body } = await call('GET', `/orders/${created.id}`);
        return body.status === 'closed' && body.closeTask.state === 'done' ? body : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50, message: 'order was not closed' },
    );
    expect(closed.closedAt).toEqual(expect.any(String));
    expect(closed.paidAt).toBeUndefined();
    expect(await redis.hget(`${keyPrefix}:order:${created.id}`, 'status')).toBe('closed');

    const late = await call('POST', `/orders/${created.id}/pay`);
    expect(late.status).toBe(409);
    expect(late.body.message).toMatch(/closed/);
  });

  it('pays an order, cancels its close task, and it stays paid', async () => {
    const created = await createOrder({ item: 'pen', amount: 2, closeAfterMs: 300 });
    const paid = await call('POST', `/orders/${created.id}/pay`);
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ id: created.id, status: 'paid', closeTaskCancel: 'cancelled' });
    expect(paid.body.paidAt).toEqual(expect.any(String));

    await sleep(600);
    const later = await call('GET', `/orders/${created.id}`);
    expect(later.body).toMatchObject({ status: 'paid', closeTask: { state: 'unknown' } });
    expect(later.body.closedAt).toBeUndefined();

    const again = await call('POST', `/orders/${created.id}/pay`);
    expect(again.status).toBe(409);
  });

  it('uses the configured close delay when the body gives none', async () => {
    const created = await createOrder({ item: 'lamp', amount: 40 });
    expect(Date.parse(created.closesAt) - Date.parse(created.createdAt)).toBe(60_000);
    const { body } = await call('GET', `/orders/${created.id}`);
    expect(body.closeTask.state).toBe('delayed');
  });

  it('never both pays and closes an order when payment races the close', async () => {
    const orders = await Promise.all(
      Array.from({ length: 20 }, (_, i) => createOrder({ item: `race-${i}`, amount: 1, closeAfterMs: 40 + (i % 5) * 5 })),
    );
    await sleep(30);
    const pays = await Promise.all(orders.map((o) => call('POST', `/orders/${o.id}/pay`)));
    for (const [i, order] of orders.entries()) {
      expect([200, 409]).toContain(pays[i].status);
      const expected = pays[i].status === 200 ? 'paid' : 'closed';
      const final = await waitFor(
        async () => {
          const { body } = await call('GET', `/orders/${order.id}`);
          return body.status !== 'pending' && !['delayed', 'ready', 'running'].includes(body.closeTask.state) ? body : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 50, message: `order ${order.id} stayed pending` },
      );
      expect(final.status).toBe(expected);
      expect(final.paidAt !== undefined && final.closedAt !== undefined).toBe(false);
    }
  });

  it('serves the queues dashboard at /queues: 401 without the token, its types with it', async () => {
    expect((await fetch(`${base}/queues/api/overview`)).status).toBe(401);
    const reply = await fetch(`${base}/queues/api/overview`, { headers: { authorization: 'Bearer sample-dashboard-token' } });
    expect(reply.status).toBe(200);
    const overview = (await reply.json()) as { types: { type: string; ordered: boolean }[]; route?: { qId: string } };
    expect(overview.types.map((t) => t.type).sort()).toEqual(['ledger.apply', 'order.close']);
    expect(overview.route?.qId).toBe('orders-sample');
  });

  it('rejects bad input with 400 and unknown orders with 404', async () => {
    const cases: [unknown, RegExp][] = [
      [{ amount: 5 }, /item is required/],
      [{ item: '   ', amount: 5 }, /item is required/],
      [{ item: 'x', amount: 0 }, /amount .*positive/],
      [{ item: 'x', amount: -3 }, /amount .*positive/],
      [{ item: 'x', amount: '5' }, /amount .*positive/],
      [{ item: 'x', amount: 5, closeAfterMs: -1 }, /closeAfterMs/],
      [{ item: 'x', amount: 5, closeAfterMs: 'soon' }, /closeAfterMs/],
      [{ item: 'x', amount: 5, closeAfterMs: 1.5 }, /closeAfterMs/],
      [[1, 2], /JSON object/],
    ];
    for (const [body, message] of cases) {
      const reply = await call('POST', '/orders', body);
      expect({ body, status: reply.status }).toEqual({ body, status: 400 });
      expect(JSON.stringify(reply.body.message)).toMatch(message);
    }
    const both = await call('POST', '/orders', {});
    expect(both.body.message).toEqual([
      expect.stringMatching(/item is required/),
      expect.stringMatching(/amount is required/),
    ]);

    expect((await call('GET', '/orders/no-such-order')).status).toBe(404);
    expect((await call('POST', '/orders/no-such-order/pay')).status).toBe(404);
    expect(await redis.keys(`${keyPrefix}:order:*`)).not.toContain(`${keyPrefix}:order:no-such-order`);
  });
});
