/**
 * docs/migrating-from-bullmq.md: this library's side of its examples compiles and runs, and the guide shows it
 * as it is. The examples live in test/fixtures/migration-guide.ts (imported below, so ts-jest compiles it and
 * `tsc --noEmit` type-checks it), each between `// snippet: <name>` and `// end-snippet`; the guide shows each
 * under `<!-- snippet: <name> -->`. Every other TypeScript block of the guide is BullMQ's side, marked
 * `<!-- bullmq -->` (not compiled here: @nestjs/bullmq is not installed).
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { Test, type TestingModule } from '@nestjs/testing';
import { DistributedQueueTestingModule, TestQueue } from 'nestjs-distributed-queue/testing';
import { TaskFlowService, TaskScheduleService } from 'nestjs-distributed-queue';
import {
  AccountService, ApplyLedgerEventWorker, BillingService, Ledger, Mailer, PriceLineWorker, RenderBillWorker, ReportSchedules, SendReportWorker, SendWelcome,
  SendWelcomeWorker, SignupService, type LedgerEvent,
} from '../../../test/fixtures/migration-guide';
import { blocksOf, REPO_ROOT, regionsOf } from '../../../test/support/docs-snippets';

const GUIDE = 'docs/migrating-from-bullmq.md';
const FIXTURE = 'test/fixtures/migration-guide.ts';

describe('docs/migrating-from-bullmq.md shows the fixture as it is', () => {
  const regions = regionsOf(FIXTURE);
  const blocks = blocksOf(readFileSync(join(REPO_ROOT, GUIDE), 'utf8'));
  const ours = blocks.filter((b) => !b.foreign);

  it('every TypeScript block of the guide is a fixture snippet, shown once, or marked <!-- bullmq -->', () => {
    expect(ours.filter((b) => b.name === null).map((b) => `${GUIDE}:${b.line}`)).toEqual([]);
    const names = ours.map((b) => b.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
    expect(names.filter((n) => !regions.has(n!))).toEqual([]);
  });

  it('shows the BullMQ side too', () => {
    expect(blocks.filter((b) => b.foreign).length).toBeGreaterThanOrEqual(6);
  });

  it('every fixture snippet is in the guide', () => {
    const shown = new Set(ours.map((b) => b.name));
    expect([...regions.keys()].filter((n) => !shown.has(n))).toEqual([]);
  });

  it.each([...regions.keys()])('snippet %s is the same text in the guide and in the fixture', (name) => {
    expect(ours.find((b) => b.name === name)?.code).toBe(regions.get(name));
  });
});

describe('the guide\'s examples run (testing module, no Redis)', () => {
  let moduleRef: TestingModule;
  let queue: TestQueue;
  const mailer = { send: jest.fn<Promise<void>, [string, string, AbortSignal?]>() };
  const applied: string[] = [];
  const ledger: Ledger = {
    apply: async (accountId: string, event: LedgerEvent) => void applied.push(`${accountId}:${event.kind}:${event.amount}`),
  };

  beforeEach(async () => {
    mailer.send.mockReset().mockResolvedValue(undefined);
    applied.length = 0;
    moduleRef = await Test.createTestingModule({
      imports: [DistributedQueueTestingModule.forRoot({ route: { qId: 'ledger', partitions: 4 } })],
      providers: [
        SendWelcomeWorker, SignupService, SendReportWorker, ReportSchedules, PriceLineWorker, RenderBillWorker, BillingService, ApplyLedgerEventWorker,
        AccountService, { provide: Mailer, useValue: mailer }, { provide: Ledger, useValue: ledger },
      ],
    }).compile();
    await moduleRef.init();
    queue = moduleRef.get(TestQueue);
  });

  afterEach(() => moduleRef.close());

  it('delayed-retries: one task per user, a minute later, retried after its backoff', async () => {
    const signup = moduleRef.get(SignupService);
    expect(await signup.signedUp('u1', 'u1@example.com')).toBe('welcome-u1');
    expect(await signup.signedUp('u1', 'u1@example.com')).toBe('welcome-u1');
    expect(queue.getSubmitted(SendWelcome)).toHaveLength(1);
    mailer.send.mockRejectedValueOnce(new Error('smtp down'));

    await queue.advanceBy(60_000 - 1);
    expect(mailer.send).not.toHaveBeenCalled();
    await queue.advanceBy(1);
    expect(mailer.send).toHaveBeenCalledTimes(1);
    await queue.advanceBy(1_000); // the first retry waits at most delayMs
    expect(mailer.send).toHaveBeenCalledTimes(2);
    expect(await queue.getState(SendWelcome, 'welcome-u1')).toBe('done');
  });

  it('cron: the schedules are upserted and removed', async () => {
    const schedules = moduleRef.get(ReportSchedules);
    await schedules.enable();
    expect((await moduleRef.get(TaskScheduleService).list()).map((s) => s.name).sort()).toEqual(['daily-report', 'on-call-report']);
    await schedules.disable();
    expect(await moduleRef.get(TaskScheduleService).list()).toEqual([]);
  });

  it('flow: the bill renders from its priced lines', async () => {
    const id = await moduleRef.get(BillingService).bill('b1', [{ sku: 'a', qty: 2 }, { sku: 'b', qty: 3 }]);
    await queue.drain();
    const flow = await moduleRef.get(TaskFlowService).getFlow(id);
    expect(flow?.state).toBe('completed');
    expect(flow?.nodes.find((n) => n.ref === 'render')?.result).toEqual({ totalCents: 1250 });
  });

  it('ordered: one account\'s events apply in submission order', async () => {
    const accounts = moduleRef.get(AccountService);
    await accounts.record('acc-1', { kind: 'deposit', amount: 10 });
    await accounts.record('acc-2', { kind: 'deposit', amount: 5 });
    await accounts.record('acc-1', { kind: 'withdraw', amount: 4 });
    await queue.drain();
    expect(applied.filter((a) => a.startsWith('acc-1'))).toEqual(['acc-1:deposit:10', 'acc-1:withdraw:4']);
    expect(applied).toContain('acc-2:deposit:5');
  });
});
