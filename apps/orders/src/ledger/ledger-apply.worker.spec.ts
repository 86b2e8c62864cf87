/**
 * Unit tests of `LedgerApplyWorker` (no Redis), hosted by `DistributedQueueTestingModule` with the sample's
 * route queue, with `LedgerStore` replaced by an in-memory one.
 *
 * NOTE: `TestQueue.runTask` cannot give a task its ordering key (`task.key`, the account id here) or its
 * `fence`, and the testing module's ordered tasks (submitOrdered) are not final yet: the handler is called
 * directly, as the route queue would call it, with the worker instance the module built.
 */
import { Logger } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import type { Task } from 'nestjs-distributed-queue';
import { DistributedQueueTestingModule } from 'nestjs-distributed-queue/testing';
import { AppConfigModule } from '../app.config';
import { LEDGER_APPLY_TASK, type LedgerApplyPayload, type LedgerEventType } from './ledger';
import { LedgerApplyWorker } from './ledger-apply.worker';
import { LedgerStore, type ApplyResult } from './ledger.store';

/** LedgerStore.apply's rules in memory: cents, a withdraw above the balance rejected, an event id applied once. */
class InMemoryLedgerStore {
  readonly accounts = new Map<string, { cents: number; seq: number; seen: Set<string>; by: { machine: string; epoch?: number }[] }>();

  async apply(accountId: string, eventId: string, type: LedgerEventType, amountCents: number, by: { machine: string; epoch?: number }): Promise<ApplyResult> {
    let account = this.accounts.get(accountId);
    if (!account) this.accounts.set(accountId, (account = { cents: 0, seq: 0, seen: new Set(), by: [] }));
    if (account.seen.has(eventId)) return { result: 'duplicate', balance: account.cents / 100, seq: account.seq };
    const result = type === 'deposit' || account.cents >= amountCents ? 'applied' : 'rejected';
    if (result === 'applied') account.cents += type === 'deposit' ? amountCents : -amountCents;
    account.seen.add(eventId);
    account.by.push(by);
    return { result, balance: account.cents / 100, seq: ++account.seq };
  }
}

const MACHINE = 'test-machine';

describe('LedgerApplyWorker (testing module, no Redis)', () => {
  let moduleRef: TestingModule;
  let store: InMemoryLedgerStore;
  let worker: LedgerApplyWorker;
  let n = 0;

  /** A ledger.apply task as the route queue hands it to the handler: the account id is its ordering key. */
  const task = (key: string | undefined, payload: Partial<LedgerApplyPayload> | null, attempt = 1): Task<LedgerApplyPayload> => ({
    id: `t${++n}`, type: LEDGER_APPLY_TASK, key, payload: payload as LedgerApplyPayload, attempt, dueAt: 0, fence: { partition: 3, epoch: 7 },
  });
  const apply = (t: Task<LedgerApplyPayload>): Promise<void> => worker.handle(t, new AbortController().signal);

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
    store = moduleRef.get<InMemoryLedgerStore>(LedgerStore);
    worker = moduleRef.get(LedgerApplyWorker);
  });
  afterEach(() => moduleRef.close());

  it('applies deposits and withdrawals to the account of the task key, in cents, stamping machine and epoch', async () => {
    await apply(task('alice', { eventId: 'e1', type: 'deposit', amount: 10.1 }));
    await apply(task('alice', { eventId: 'e2', type: 'withdraw', amount: 0.2 }));
    await apply(task('bob', { eventId: 'e3', type: 'deposit', amount: 1 }));
    expect(store.accounts.get('alice')).toMatchObject({ cents: 990, seq: 2 });
    expect(store.accounts.get('alice')?.by).toEqual([{ machine: MACHINE, epoch: 7 }, { machine: MACHINE, epoch: 7 }]);
    expect(store.accounts.get('bob')).toMatchObject({ cents: 100, seq: 1 });
  });

  it('a withdraw above the balance is recorded as rejected, not thrown (retrying cannot change it)', async () => {
    await expect(apply(task('carol', { eventId: 'e1', type: 'withdraw', amount: 5 }))).resolves.toBeUndefined();
    expect(store.accounts.get('carol')).toMatchObject({ cents: 0, seq: 1 });
  });

  it('a redelivered event (same event id) changes nothing', async () => {
    await apply(task('dave', { eventId: 'e1', type: 'deposit', amount: 3 }));
    await apply(task('dave', { eventId: 'e1', type: 'deposit', amount: 3 }, 2));
    expect(store.accounts.get('dave')).toMatchObject({ cents: 300, seq: 1 });
  });

  it('throws for what is not a ledger event (the route queue retries it, then dead-letters it)', async () => {
    const bad: [string | undefined, Partial<LedgerApplyPayload> | null][] = [
      [undefined, { eventId: 'e1', type: 'deposit', amount: 1 }],
      ['erin', null],
      ['erin', { type: 'deposit', amount: 1 }],
      ['erin', { eventId: 'e1', type: 'refund' as LedgerEventType, amount: 1 }],
      ['erin', { eventId: 'e1', type: 'deposit', amount: 0.001 }],
    ];
    for (const [key, payload] of bad) await expect(apply(task(key, payload))).rejects.toThrow(/not a ledger event/);
    expect(store.accounts.size).toBe(0);
  });

  it('stops before writing when its signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('partition lost'));
    await expect(worker.handle(task('frank', { eventId: 'e1', type: 'deposit', amount: 1 }), controller.signal)).rejects.toThrow('partition lost');
    expect(store.accounts.size).toBe(0);
  });

  it.todo('through the route queue: submitOrdered per account, applied in submission order (when the testing module\'s ordered tasks are final)');
});
