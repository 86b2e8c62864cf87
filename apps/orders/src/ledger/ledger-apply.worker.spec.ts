/**
 * Unit tests of `LedgerApplyWorker` (no Redis), hosted by `DistributedQueueTestingModule` with the sample's
 * route queue, with `LedgerStore` replaced by an in-memory one: the handler alone through `TestQueue.runTask`
 * (which gives it its ordering key, `task.key`, and `task.fence`), and the events of several accounts through
 * the in-memory route queue (`submitOrdered`).
 */
import { Logger } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { InvalidSubmitOptionsError, TaskInspectorService, TaskSubmitService, type Task } from 'nestjs-distributed-queue';
import { DistributedQueueTestingModule, TestQueue } from 'nestjs-distributed-queue/testing';
import { AppConfigModule } from '../app.config';
import { LEDGER_APPLY_TASK, type LedgerApplyPayload, type LedgerEventType } from './ledger';
import { LedgerApplyWorker } from './ledger-apply.worker';
import { LedgerStore, type ApplyResult } from './ledger.store';

/**
 * LedgerStore.apply's rules in memory: cents, a withdraw above the balance rejected, an event id applied once.
 * Each call yields once before it writes (as a Redis round trip would), and counts the calls in flight.
 */
class InMemoryLedgerStore {
  readonly accounts = new Map<string, { cents: number; seq: number; seen: Set<string>; by: { machine: string; epoch?: number }[] }>();
  private readonly inFlight = new Map<string, number>();
  /** The most calls in flight at once: of one account, and of all accounts together. */
  peak = { account: 0, all: 0 };

  async apply(accountId: string, eventId: string, type: LedgerEventType, amountCents: number, by: { machine: string; epoch?: number }): Promise<ApplyResult> {
    this.inFlight.set(accountId, (this.inFlight.get(accountId) ?? 0) + 1);
    this.peak.account = Math.max(this.peak.account, this.inFlight.get(accountId)!);
    this.peak.all = Math.max(this.peak.all, [...this.inFlight.values()].reduce((sum, n) => sum + n, 0));
    await new Promise((resolve) => setImmediate(resolve));
    this.inFlight.set(accountId, this.inFlight.get(accountId)! - 1);
    let account = this.accounts.get(accountId);
    if (!account) this.accounts.set(accountId, (account = { cents: 0, seq: 0, seen: new Set(), by: [] }));
    if (account.seen.has(eventId)) return { result: 'duplicate', balance: account.cents / 100, seq: account.seq };
    const result = type === 'deposit' || account.cents >= amountCents ? 'applied' : 'rejected';
    if (result === 'applied') account.cents += type === 'deposit' ? amountCents : -amountCents;
    account.seen.add(eventId);
    account.by.push(by);
    return { result, balance: account.cents / 100, seq: ++account.seq };
  }

  /** The event ids processed for an account, in the order they were processed. */
  eventsOf(accountId: string): string[] {
    return [...(this.accounts.get(accountId)?.seen ?? [])];
  }
}

const MACHINE = 'test-machine';

describe('LedgerApplyWorker (testing module, no Redis)', () => {
  let moduleRef: TestingModule;
  let queue: TestQueue;
  let store: InMemoryLedgerStore;

  /** Runs the handler on a ledger.apply task of `key` (the account id), as the route queue would. */
  const apply = (key: string, payload: Partial<LedgerApplyPayload> | null, attempt = 1): Promise<void> =>
    queue.runTask(LEDGER_APPLY_TASK, payload, { key, attempt });

  beforeAll(() => jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined));
  afterAll(() => jest.restoreAllMocks());

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [
        AppConfigModule.register({ redisUrl: 'redis://unused.invalid:1', route: { machineId: MACHINE } }),
        // the route queue is required by an ordered @TaskWorker, as in the real module
        DistributedQueueTestingModule.forRoot({ keyPrefix: 'orders-sample', route: { qId: 'orders-sample', partitions: 8 } }),
      ],
      providers: [LedgerApplyWorker, { provide: LedgerStore, useClass: InMemoryLedgerStore }],
    }).compile();
    await moduleRef.init();
    queue = moduleRef.get(TestQueue);
    store = moduleRef.get<InMemoryLedgerStore>(LedgerStore);
  });
  afterEach(() => moduleRef.close());

  it('applies deposits and withdrawals to the account of the task key, in cents, stamping machine and epoch', async () => {
    await apply('alice', { eventId: 'e1', type: 'deposit', amount: 10.1 });
    await apply('alice', { eventId: 'e2', type: 'withdraw', amount: 0.2 });
    await apply('bob', { eventId: 'e3', type: 'deposit', amount: 1 });
    expect(store.accounts.get('alice')).toMatchObject({ cents: 990, seq: 2 });
    // runTask's fence: the key's partition, epoch 1 (the testing module's partitions never change owner)
    expect(store.accounts.get('alice')?.by).toEqual([{ machine: MACHINE, epoch: 1 }, { machine: MACHINE, epoch: 1 }]);
    expect(store.accounts.get('bob')).toMatchObject({ cents: 100, seq: 1 });
  });

  it('a withdraw above the balance is recorded as rejected, not thrown (retrying cannot change it)', async () => {
    await expect(apply('carol', { eventId: 'e1', type: 'withdraw', amount: 5 })).resolves.toBeUndefined();
    expect(store.accounts.get('carol')).toMatchObject({ cents: 0, seq: 1 });
  });

  it('a redelivered event (same event id) changes nothing', async () => {
    await apply('dave', { eventId: 'e1', type: 'deposit', amount: 3 });
    await apply('dave', { eventId: 'e1', type: 'deposit', amount: 3 }, 2);
    expect(store.accounts.get('dave')).toMatchObject({ cents: 300, seq: 1 });
  });

  it('throws for what is not a ledger event (the route queue retries it, then dead-letters it)', async () => {
    const bad: [string, Partial<LedgerApplyPayload> | null][] = [
      ['erin', null],
      ['erin', { type: 'deposit', amount: 1 }],
      ['erin', { eventId: 'e1', type: 'refund' as LedgerEventType, amount: 1 }],
      ['erin', { eventId: 'e1', type: 'deposit', amount: 0.001 }],
    ];
    for (const [key, payload] of bad) await expect(apply(key, payload)).rejects.toThrow(/not a ledger event/);
    expect(store.accounts.size).toBe(0);
    // NOTE: no task has an empty key: runTask refuses one as submitOrdered does
    await expect(apply('', { eventId: 'e1', type: 'deposit', amount: 1 })).rejects.toBeInstanceOf(InvalidSubmitOptionsError);
  });

  it('stops before writing when its signal is aborted', async () => {
    // NOTE: runTask cannot hand the handler a signal aborted before it writes: the handler is called
    // directly, with the worker instance the module built
    const task: Task<LedgerApplyPayload> = {
      id: 't1', type: LEDGER_APPLY_TASK, key: 'frank', payload: { eventId: 'e1', type: 'deposit', amount: 1 }, attempt: 1, dueAt: 0, fence: { partition: 3, epoch: 7 },
    };
    const controller = new AbortController();
    controller.abort(new Error('partition lost'));
    await expect(moduleRef.get(LedgerApplyWorker).handle(task, controller.signal)).rejects.toThrow('partition lost');
    expect(store.accounts.size).toBe(0);
  });

  it('through the route queue: each account\'s events applied in submission order, one at a time, accounts side by side', async () => {
    const submit = moduleRef.get(TaskSubmitService);
    const events: [string, LedgerApplyPayload][] = [
      ['alice', { eventId: 'a1', type: 'deposit', amount: 5 }],
      ['bob', { eventId: 'b1', type: 'deposit', amount: 1 }],
      ['alice', { eventId: 'a2', type: 'withdraw', amount: 3 }],
      ['alice', { eventId: 'a3', type: 'withdraw', amount: 3 }], // above the balance left by a2: rejected
      ['bob', { eventId: 'b2', type: 'withdraw', amount: 0.5 }],
    ];
    for (const [account, event] of events) {
      expect(await submit.submitOrdered<LedgerApplyPayload>(LEDGER_APPLY_TASK, account, event, { id: event.eventId })).toMatchObject({ outcome: 'queued' });
    }

    expect(await queue.runDue()).toBe(5);

    expect(store.eventsOf('alice')).toEqual(['a1', 'a2', 'a3']);
    expect(store.accounts.get('alice')).toMatchObject({ cents: 200, seq: 3 });
    expect(store.eventsOf('bob')).toEqual(['b1', 'b2']);
    expect(store.accounts.get('bob')).toMatchObject({ cents: 50, seq: 2 });
    expect(store.peak).toEqual({ account: 1, all: 2 });
  });

  it('through the route queue: a bad event holds its account until it is dead-lettered, other accounts go on', async () => {
    const submit = moduleRef.get(TaskSubmitService);
    await submit.submitOrdered(LEDGER_APPLY_TASK, 'gina', { eventId: 'g1', type: 'refund', amount: 1 }, { id: 'g1' });
    await submit.submitOrdered<LedgerApplyPayload>(LEDGER_APPLY_TASK, 'gina', { eventId: 'g2', type: 'deposit', amount: 2 }, { id: 'g2' });
    await submit.submitOrdered<LedgerApplyPayload>(LEDGER_APPLY_TASK, 'hal', { eventId: 'h1', type: 'deposit', amount: 4 }, { id: 'h1' });

    expect(await queue.runDue()).toBe(2); // g1's first attempt fails, h1 is applied
    expect(store.eventsOf('gina')).toEqual([]); // g2 waits behind g1's retry
    expect(store.eventsOf('hal')).toEqual(['h1']);

    expect(await queue.drain()).toBe(3); // g1's 2 retries (maxAttempts 3), through their backoffs; then g2
    expect(store.eventsOf('gina')).toEqual(['g2']);
    expect(await moduleRef.get(TaskInspectorService).listOrderedDead()).toMatchObject([
      { id: 'g1', key: 'gina', type: LEDGER_APPLY_TASK, error: { message: expect.stringMatching(/not a ledger event/), attempts: 3 } },
    ]);
  });
});
