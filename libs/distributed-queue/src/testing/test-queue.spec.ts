import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TaskFlowService, TaskGroupsService, TaskSubmitService, TaskInspectorService, TaskWorker, OnTaskEvent, type Task, type TaskEvent } from '../index';
import { DistributedQueueTestingModule, TestQueue } from './index';

const seen: { id: string; attempt: number; at: number }[] = [];
const events: string[] = [];

@TaskWorker('order.cancel', { maxAttempts: 3, backoff: { type: 'fixed', delayMs: 1000, jitter: 0 } })
class CancelWorker {
  constructor(private readonly queue: TestQueue) {}
  handle(task: Task<{ orderId: string; fail?: number }>): string {
    seen.push({ id: task.id, attempt: task.attempt, at: this.queue.now() });
    if (task.payload.fail && task.attempt <= task.payload.fail) throw new Error(`boom ${task.attempt}`);
    return `cancelled ${task.payload.orderId}`;
  }
}

@Injectable()
class Listener {
  @OnTaskEvent('order.cancel', ['completed', 'retrying', 'dead'])
  on(event: TaskEvent): void {
    events.push(`${event.event}:${event.task.id}`);
  }
}

describe('TestQueue (smoke)', () => {
  let moduleRef: TestingModule;
  afterEach(async () => {
    await moduleRef?.close();
    seen.length = 0;
    events.length = 0;
  });

  it('runs a delayed task when the clock reaches it, retries, and tells events', async () => {
    moduleRef = await Test.createTestingModule({ imports: [DistributedQueueTestingModule.forRoot({ now: 1_000_000 })], providers: [CancelWorker, Listener] }).compile();
    await moduleRef.init();
    const submit = moduleRef.get(TaskSubmitService);
    const inspect = moduleRef.get(TaskInspectorService);
    const queue = moduleRef.get(TestQueue);
    const id = await submit.submit('order.cancel', { orderId: 'o1', fail: 1 }, { delay: 30 * 60_000 });
    queue.expectSubmitted('order.cancel', { orderId: 'o1' });
    expect(await inspect.getState('order.cancel', id)).toBe('delayed');
    expect(await queue.runDue()).toBe(0);
    expect(await queue.advanceBy(30 * 60_000)).toBe(1);
    expect(await inspect.getState('order.cancel', id)).toBe('delayed');
    expect(await queue.advanceBy(1000)).toBe(1);
    expect(seen).toEqual([{ id, attempt: 1, at: 1_000_000 + 1_800_000 }, { id, attempt: 2, at: 1_000_000 + 1_801_000 }]);
    const info = await inspect.getTask('order.cancel', id);
    expect(info).toEqual({ id, type: 'order.cancel', state: 'done', result: 'cancelled o1' });
    expect(events).toEqual([`retrying:${id}`, `completed:${id}`]);
  });

  it('submitAndWait resolves once the test runs the task', async () => {
    moduleRef = await Test.createTestingModule({ imports: [DistributedQueueTestingModule.forRoot()], providers: [CancelWorker] }).compile();
    await moduleRef.init();
    const submit = moduleRef.get(TaskSubmitService);
    const queue = moduleRef.get(TestQueue);
    const waiting = submit.submitAndWait('order.cancel', { orderId: 'o2' });
    await new Promise((r) => setImmediate(r));
    await queue.runDue();
    await expect(waiting).resolves.toBe('cancelled o2');
  });
});

const orderedSeen: string[] = [];

@TaskWorker('acct.event', { ordered: true, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 500, jitter: 0 } })
class AccountWorker {
  async handle(task: Task<{ n: number; fail?: boolean }>): Promise<void> {
    orderedSeen.push(`${task.key}:${task.payload.n}:${task.attempt}`);
    await new Promise((r) => setImmediate(r));
    if (task.payload.fail) throw new Error('nope');
  }
}

describe('TestQueue ordered (smoke)', () => {
  let moduleRef: TestingModule;
  afterEach(async () => {
    await moduleRef?.close();
    orderedSeen.length = 0;
  });

  it('runs a key in order, keys side by side, retries in place then dead-letters; delayed ones enter when due', async () => {
    moduleRef = await Test.createTestingModule({
      imports: [DistributedQueueTestingModule.forRoot({ route: { qId: 'acct', partitions: 4 } })], providers: [AccountWorker],
    }).compile();
    await moduleRef.init();
    const submit = moduleRef.get(TaskSubmitService);
    const inspect = moduleRef.get(TaskInspectorService);
    const queue = moduleRef.get(TestQueue);
    const r = await submit.submitOrdered('acct.event', 'a', { n: 1, fail: true });
    expect(r).toMatchObject({ outcome: 'queued' });
    await submit.submitOrdered('acct.event', 'a', { n: 2 });
    await submit.submitOrdered('acct.event', 'b', { n: 1 });
    expect((await submit.submitOrdered('acct.event', 'a', { n: 3 }, { delay: 10_000 })).outcome).toBe('scheduled');
    await queue.runDue();
    expect(orderedSeen).toEqual(['a:1:1', 'b:1:1']);
    await queue.advanceBy(500);
    expect(orderedSeen).toEqual(['a:1:1', 'b:1:1', 'a:1:2', 'a:2:1']);
    const dead = await inspect.listOrderedDead();
    expect(dead).toMatchObject([{ key: 'a', type: 'acct.event', payload: { n: 1, fail: true }, error: { message: 'nope', attempts: 2 } }]);
    await queue.advanceBy(10_000);
    expect(orderedSeen.at(-1)).toBe('a:3:1');
    expect((await inspect.getCounts('acct.event'))).toMatchObject({ ready: 0, running: 0, dead: 1 });
  });
});

const groupRuns: string[] = [];

@TaskWorker('render', { concurrency: 1 })
class RenderWorker {
  handle(task: Task<string>): void {
    groupRuns.push(task.payload);
  }
}

describe('TestQueue groups (smoke)', () => {
  let moduleRef: TestingModule;
  afterEach(async () => {
    await moduleRef?.close();
    groupRuns.length = 0;
  });

  it('serves groups round-robin, weighted; a paused group waits', async () => {
    moduleRef = await Test.createTestingModule({ imports: [DistributedQueueTestingModule.forRoot()], providers: [RenderWorker] }).compile();
    await moduleRef.init();
    const submit = moduleRef.get(TaskSubmitService);
    const groups = moduleRef.get(TaskGroupsService);
    const queue = moduleRef.get(TestQueue);
    await submit.submitMany('render', [1, 2, 3, 4, 5, 6].map((n) => ({ payload: `big${n}`, group: 'big' })));
    await submit.submitMany('render', [1, 2].map((n) => ({ payload: `small${n}`, group: 'small' })));
    await submit.submitMany('render', [1, 2].map((n) => ({ payload: `paused${n}`, group: 'p' })));
    await groups.pauseGroup('render', 'p');
    await groups.setGroupWeight('render', 'big', 2);
    expect(await groups.getGroups('render')).toMatchObject({ total: 3, groups: [{ group: 'big', waiting: 6 }, { group: 'small', waiting: 2 }, { group: 'p', waiting: 2, paused: true }] });
    await queue.runDue();
    expect(groupRuns).toEqual(['big1', 'small1', 'big2', 'big3', 'small2', 'big4', 'big5', 'big6']);
    expect(await queue.advanceBy(60_000)).toBe(0);
    await groups.resumeGroup('render', 'p');
    await queue.runDue();
    expect(groupRuns.slice(8)).toEqual(['paused1', 'paused2']);
  });
});

describe('TestQueue flows (smoke)', () => {
  let moduleRef: TestingModule;
  afterEach(async () => moduleRef?.close());

  it("runs the README's invoice flow: lines, then render with their results, then email; getFlow says completed", async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { PriceLineWorker, RenderInvoiceWorker, EmailInvoiceWorker, InvoiceService } = require('../../../../test/fixtures/flows-readme') as typeof import('../../../../test/fixtures/flows-readme');
    moduleRef = await Test.createTestingModule({
      imports: [DistributedQueueTestingModule.forRoot()], providers: [PriceLineWorker, RenderInvoiceWorker, EmailInvoiceWorker, InvoiceService],
    }).compile();
    await moduleRef.init();
    const queue = moduleRef.get(TestQueue);
    const ended: string[] = [];
    moduleRef.get(TaskFlowService).onFlowEnded((e) => void ended.push(`${e.flowId}:${e.state}`));
    const id = await moduleRef.get(InvoiceService).bill('42', [{ sku: 'a', qty: 2 }, { sku: 'b', qty: 3 }]);
    expect(await moduleRef.get(TaskInspectorService).getState('invoice.render', `&${id}:render`)).toBe('pending');
    await queue.runDue();
    expect(moduleRef.get(EmailInvoiceWorker).sent).toEqual([1250]);
    expect(await moduleRef.get(TaskFlowService).getFlow(id)).toMatchObject({ id, state: 'completed' });
    expect(ended).toEqual([`${id}:completed`]);
  });
});
