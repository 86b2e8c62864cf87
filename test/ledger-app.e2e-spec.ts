import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import { partitionOf } from 'nestjs-distributed-queue/route/route-keys';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';
import { httpCall, startSampleApp, type Reply, type SampleApp } from './support/http';

/** The ledger example of the orders sample (apps/orders/src/ledger): ordered tasks over HTTP, standalone Redis. */
const single = getTargets().find((t) => t.name === 'single');
const redisUrl = typeof single?.connection === 'string' ? single.connection : undefined;


type EventType = 'deposit' | 'withdraw';

/** What the worker must compute when it applies `events` in this order (amounts in cents to stay exact). */
function replay(events: { type: EventType; amount: number }[]): { balance: number; results: ('applied' | 'rejected')[] } {
  let cents = 0;
  const results = events.map(({ type, amount }) => {
    const c = Math.round(amount * 100);
    if (type === 'deposit') cents += c;
    else if (cents >= c) cents -= c;
    else return 'rejected' as const;
    return 'applied' as const;
  });
  return { balance: cents / 100, results };
}

(redisUrl ? describe : describe.skip)('orders sample app: ledger (route queue)', () => {
  const keyPrefix = uniquePrefix('ledger-app');
  const qId = uniquePrefix('ledger-q');
  const machineId = `${qId}-machine`;
  let sample: SampleApp | undefined;
  let app: INestApplication;
  let base: string;
  let redis: Redis;

  const call = (method: 'GET' | 'POST', path: string, body?: unknown): Promise<Reply> => httpCall(base, method, path, body);

  async function postEvent(account: string, body: Record<string, unknown>): Promise<any> {
    const reply = await call('POST', `/accounts/${account}/events`, body);
    expect({ account, body, status: reply.status, reply: reply.body }).toEqual({ account, body, status: 202, reply: expect.anything() });
    return reply.body;
  }

  /** Polls GET /accounts/:id until `count` events were processed (applied or rejected). */
  function waitProcessed(account: string, count: number): Promise<any> {
    return waitFor(
      async () => {
        const { status, body } = await call('GET', `/accounts/${account}`);
        return status === 200 && body.applied + body.rejected >= count ? body : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 50, message: `account ${account}: ${count} events not processed` },
    );
  }

  beforeAll(async () => {
    sample = await startSampleApp({
          redisUrl: redisUrl!,
          keyPrefix,
          closeAfterMs: 60_000,
          route: { qId, partitions: 8, machineId, heartbeatMs: 200, offlineMs: 1000, idleMs: 1000, rebalanceMs: 200 },
        });
    ({ app, base, redis } = sample);
  });

  afterAll(async () => {
    await sample?.close();
  });

  it('owns all 8 partitions as its only machine', async () => {
    const status = await waitFor(
      async () => {
        const { body } = await call('GET', '/route/status');
        return body.partitions.every((p: any) => p.owner === machineId) ? body : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50, message: 'partitions were not all assigned to the app' },
    );
    expect(status).toMatchObject({ qId, machineId, owned: [0, 1, 2, 3, 4, 5, 6, 7] });
    expect(status.partitions.map((p: any) => p.partition)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    for (const p of status.partitions) {
      expect(p).toMatchObject({ owner: machineId, state: 'active', dead: 0 });
      expect(p.epoch).toBeGreaterThan(0);
    }
    expect(status.machines.map((m: any) => m.id)).toEqual([machineId]);
    expect(status.machines[0].lastHeartbeat).toBeGreaterThan(Date.now() - 60_000);
  });

  it('applies each account\'s events in submission order, so rejected withdrawals land where they should', async () => {
    const accounts = ['acc-a', 'acc-b', 'acc-c'];
    // Alternating withdraw/deposit, 10 per account: a withdraw is rejected when the balance before it is too
    // low, so the final balance depends on the order (checked below against the reversed order).
    const amounts: Record<string, number[]> = {
      'acc-a': [50, 30, 20, 10, 25, 40, 70, 5.5, 60, 0.25],
      'acc-b': [1, 100, 99.99, 0.5, 1, 20, 20.01, 3, 2, 7.75],
      'acc-c': [10, 10, 10, 15, 25, 5, 5, 30, 12.5, 12.5],
    };
    const plan = new Map<string, { type: EventType; amount: number; eventId?: string; partition?: number }[]>();
    for (const account of accounts) {
      plan.set(account, amounts[account].map((amount, i) => ({ type: i % 2 === 0 ? 'withdraw' : 'deposit', amount })));
    }
    for (const account of accounts) {
      const events = plan.get(account)!;
      const forward = replay(events).balance;
      const reversed = replay([...events].reverse()).balance;
      expect({ account, differs: forward !== reversed }).toEqual({ account, differs: true });
    }

    // 30 posts, accounts interleaved; each account's events one after another (that is its submission order).
    for (let i = 0; i < 10; i++) {
      for (const account of accounts) {
        const event = plan.get(account)![i];
        const reply = await postEvent(account, { type: event.type, amount: event.amount });
        expect(reply).toEqual({ eventId: expect.any(String), partition: partitionOf(account, 8), outcome: 'queued' });
        event.eventId = reply.eventId;
      }
    }

    for (const account of accounts) {
      const events = plan.get(account)!;
      const expected = replay(events);
      const got = await waitProcessed(account, events.length);
      const applied = expected.results.filter((r) => r === 'applied').length;
      expect(got).toMatchObject({ id: account, balance: expected.balance, applied, rejected: events.length - applied });
      expect(got.lastEvents.map((e: any) => e.eventId)).toEqual(events.map((e) => e.eventId));
      expect(got.lastEvents.map((e: any) => e.result)).toEqual(expected.results);
      expect(got.lastEvents.map((e: any) => [e.type, e.amount])).toEqual(events.map((e) => [e.type, e.amount]));
      expect(got.lastEvents.map((e: any) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      for (const e of got.lastEvents) expect(e.machine).toBe(machineId);
      expect(await redis.hget(`${keyPrefix}:account:{${account}}`, 'balance')).toBe(String(Math.round(expected.balance * 100)));
    }
    // Sanity of the fixture: both accounts a and c see rejections, so the order was really exercised.
    expect(replay(plan.get('acc-a')!).results).toContain('rejected');
    expect(replay(plan.get('acc-c')!).results).toContain('rejected');

    const { body: status } = await call('GET', '/route/status');
    for (const p of status.partitions) expect(p).toMatchObject({ owner: machineId, waiting: 0, inFlight: 0, dead: 0 });
  });

  it('applies an event id once even when it is delivered twice', async () => {
    const account = 'acc-dup';
    const eventId = `dup-${qId}`;
    const first = await postEvent(account, { type: 'deposit', amount: 5, eventId });
    const second = await postEvent(account, { type: 'deposit', amount: 5, eventId });
    expect(first).toMatchObject({ eventId, outcome: 'queued' });
    expect(second).toMatchObject({ eventId, outcome: 'queued' }); // the route queue does not dedupe ids: the worker does
    const marker = await postEvent(account, { type: 'withdraw', amount: 1.5 });

    const got = await waitProcessed(account, 2);
    await waitFor(async () => (await call('GET', '/route/status')).body.partitions.every((p: any) => p.waiting === 0 && p.inFlight === 0), {
      timeoutMs: 10_000, intervalMs: 50, message: 'route queue did not drain',
    });
    const after = (await call('GET', `/accounts/${account}`)).body;
    expect(after).toEqual(got);
    expect(after).toMatchObject({ balance: 3.5, applied: 2, rejected: 0 });
    expect(after.lastEvents.map((e: any) => e.eventId)).toEqual([eventId, marker.eventId]);
  });

  it('rejects bad input with 400 and unknown accounts with 404', async () => {
    const cases: [unknown, RegExp][] = [
      [{ amount: 5 }, /type is required/],
      [{ type: 'refund', amount: 5 }, /type is required/],
      [{ type: 'deposit' }, /amount is required/],
      [{ type: 'deposit', amount: 0 }, /amount is required/],
      [{ type: 'withdraw', amount: -3 }, /amount is required/],
      [{ type: 'deposit', amount: '5' }, /amount is required/],
      [{ type: 'deposit', amount: 1.234 }, /at most 2 decimals/],
      [{ type: 'deposit', amount: 1e12 }, /amount is required/],
      [{ type: 'deposit', amount: 5, eventId: 'has space' }, /eventId/],
      [{ type: 'deposit', amount: 5, note: 'x' }, /unknown field/],
      [[1, 2], /JSON object/],
    ];
    for (const [body, message] of cases) {
      const reply = await call('POST', '/accounts/acc-bad/events', body);
      expect({ body, status: reply.status }).toEqual({ body, status: 400 });
      expect(JSON.stringify(reply.body.message)).toMatch(message);
    }
    const both = await call('POST', '/accounts/acc-bad/events', {});
    expect(both.body.message).toEqual([expect.stringMatching(/type is required/), expect.stringMatching(/amount is required/)]);

    const badId = await call('POST', `/accounts/${'x'.repeat(65)}/events`, { type: 'deposit', amount: 1 });
    expect(badId.status).toBe(400);
    expect((await call('GET', '/accounts/has%20space')).status).toBe(400);
    expect((await call('GET', '/accounts/acc-bad')).status).toBe(404);
    expect(await redis.exists(`${keyPrefix}:account:{acc-bad}`)).toBe(0);
  });
});
