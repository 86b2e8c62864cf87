/**
 * The testing module's own contract (no Redis): its options, its life in a Jest test (with and without
 * init, with and without fake timers, nothing left behind), the clock of both modes, and TestQueue's
 * assertions and runTask. What the engine does with tasks is the conformance suite's (test/conformance),
 * run against it and against Redis.
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { AssertionError } from 'assert';
import {
  DistributedCron, DistributedQueueHealthIndicator, InvalidSubmitOptionsError, QueueControlService, TaskGroupsService, HistoryNotConfiguredError, InvalidArgumentError, TaskHistoryService, TaskInspectorService, InvalidOptionsError, InvalidPayloadError, TaskScheduleService, TaskSubmitService, TaskTimeoutError, TaskWorker,
  UnknownTaskTypeError, type ActiveTask, type CronRun, type Task,
} from '../index';
import { DistributedQueueTestingModule, TestQueue, type DistributedQueueTestingOptions } from './index';

const runs: { payload: unknown; at: number }[] = [];
const ticks: number[] = [];
let clockOf: () => number = Date.now;

@TaskWorker('mail', { maxAttempts: 2, timeoutMs: 200, backoff: { type: 'fixed', delayMs: 1000, jitter: 0 } })
class MailWorker {
  async handle(task: ActiveTask<{ to: string; hang?: boolean; fail?: boolean }>, signal: AbortSignal): Promise<string> {
    runs.push({ payload: task.payload, at: clockOf() });
    task.log(`to ${task.payload.to}`);
    if (task.payload.hang) await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
    if (task.payload.fail) throw new Error(`no mailbox ${task.payload.to}`);
    return `sent to ${task.payload.to}`;
  }
}

@Injectable()
class Nightly {
  @DistributedCron('0 0 3 * * *', { name: 'nightly' })
  run(run: CronRun): void {
    ticks.push(run.tickAt);
  }
}

@Injectable()
class Mailer {
  constructor(private readonly submit: TaskSubmitService) {}
  welcome(to: string): Promise<string> {
    return this.submit.submit('mail', { to }, { delay: 60_000 });
  }
}

const START = Date.UTC(2026, 0, 1, 0, 0, 0);

async function start(options: DistributedQueueTestingOptions = {}, init = true): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [DistributedQueueTestingModule.forRoot({ now: START, ...options })], providers: [MailWorker, Mailer, Nightly],
  }).compile();
  if (init) await moduleRef.init();
  const queue = moduleRef.get(TestQueue);
  clockOf = () => queue.now();
  return moduleRef;
}

describe('DistributedQueueTestingModule', () => {
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
    runs.length = 0;
    ticks.length = 0;
    jest.useRealTimers();
  });

  it('refuses bad options at forRoot, with InvalidOptionsError naming them', () => {
    const cases: [unknown, string][] = [
      [{ run: 'sometimes' }, 'run'], [{ now: 'yesterday' }, 'now'], [{ now: -1 }, 'now'], [{ mode: 'service' }, 'mode'], [{ scheduler: {} }, 'scheduler'],
      [{ keepDone: -1 }, 'keepDone'], [{ defaults: { maxAttempts: 0 } }, 'defaults.maxAttempts'], [{ colour: 'red' }, 'colour'], [null, 'options'],
      [{ workerOptions: [] }, 'workerOptions'], [{ workerOptions: { mail: { timeoutMs: 0 } } }, 'workerOptions.mail.timeoutMs'],
      [{ workerOptions: { mail: { ordered: true } } }, 'workerOptions.mail.ordered'], [{ workerOptions: { mail: { colour: 1 } } }, 'workerOptions.mail.colour'],
    ];
    for (const [options, name] of cases) {
      let thrown: unknown;
      try {
        DistributedQueueTestingModule.forRoot(options as DistributedQueueTestingOptions);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidOptionsError);
      expect((thrown as InvalidOptionsError).option).toBe(name);
    }
  });

  it('manual mode: the clock stands still at `now`; advanceBy runs each task at its due time, retries included', async () => {
    moduleRef = await start();
    const queue = moduleRef.get(TestQueue);
    const mailer = moduleRef.get(Mailer);
    const submit = moduleRef.get(TaskSubmitService);
    expect(queue.now()).toBe(START);
    const welcome = await mailer.welcome('a@x');
    expect(await queue.getState('mail', welcome)).toBe('delayed');
    expect(await queue.getTask('mail', welcome)).toEqual({ id: welcome, type: 'mail', state: 'delayed', attempts: 0, dueAt: START + 60_000, payload: { to: 'a@x' } });
    await submit.submit('mail', { to: 'b@x', fail: true }, { delay: 30_000 });
    await new Promise((r) => setTimeout(r, 20));
    expect(queue.now()).toBe(START);
    expect(await queue.runDue()).toBe(0);
    expect(await queue.advanceBy(120_000)).toBe(3);
    expect(runs).toEqual([
      { payload: { to: 'b@x', fail: true }, at: START + 30_000 },
      { payload: { to: 'b@x', fail: true }, at: START + 31_000 },
      { payload: { to: 'a@x' }, at: START + 60_000 },
    ]);
    expect(queue.now()).toBe(START + 120_000);
    expect(await queue.getTask('mail', welcome)).toEqual({ id: welcome, type: 'mail', state: 'done', result: 'sent to a@x', logs: [{ attempt: 1, at: START + 60_000, line: 'to a@x' }] });
    await expect(queue.advanceBy(-1)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(queue.advanceBy(Number.NaN)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await queue.setTime(START)).toBe(0);
    expect(queue.now()).toBe(START + 120_000);
  });

  it('drain runs until nothing waits, moving the clock; it leaves schedules ticking and stops at maxTasks', async () => {
    moduleRef = await start();
    const queue = moduleRef.get(TestQueue);
    const submit = moduleRef.get(TaskSubmitService);
    await submit.submitMany('mail', [{ payload: { to: '1' }, delay: 5_000 }, { payload: { to: '2' }, delay: 86_400_000 }]);
    expect(await queue.drain()).toBe(3);
    expect(queue.now()).toBe(START + 86_400_000);
    expect(ticks).toEqual([START + 3 * 3_600_000]);
    await submit.submitMany('mail', [{ payload: { to: '3' } }, { payload: { to: '4' } }, { payload: { to: '5' } }]);
    await expect(queue.drain({ maxTasks: 1 })).rejects.toThrow(/more than maxTasks \(1\)/);
  });

  it('works without init: workers and listeners are found at first use', async () => {
    moduleRef = await start({}, false);
    const queue = moduleRef.get(TestQueue);
    await moduleRef.get(TaskSubmitService).submit('mail', { to: 'c@x' });
    expect(await queue.runDue()).toBe(1);
    expect(runs).toHaveLength(1);
  });

  it('@DistributedCron ticks on the test clock; TaskScheduleService schedules submit their type', async () => {
    moduleRef = await start();
    const queue = moduleRef.get(TestQueue);
    await moduleRef.get(TaskScheduleService).upsert('digest', { everyMs: 3_600_000, type: 'mail', payload: { to: 'digest@x' } });
    await queue.advanceBy(2 * 86_400_000);
    expect(ticks).toEqual([START + 3 * 3_600_000, START + 27 * 3_600_000]);
    expect(runs.filter((r) => (r.payload as { to: string }).to === 'digest@x').map((r) => r.at - START)).toEqual(Array.from({ length: 48 }, (_, i) => (i + 1) * 3_600_000));
    expect(await moduleRef.get(TaskScheduleService).remove('digest')).toBe(true);
    await queue.advanceBy(86_400_000);
    expect(runs).toHaveLength(48);
    queue.expectSubmitted('mail', { to: 'digest@x' }, 48);
  });

  it('auto mode: tasks run as they fall due, on real timers', async () => {
    moduleRef = await start({ run: 'auto' });
    const queue = moduleRef.get(TestQueue);
    const submit = moduleRef.get(TaskSubmitService);
    const before = Date.now();
    await submit.submit('mail', { to: 'now@x' });
    await submit.submit('mail', { to: 'soon@x' }, { delay: 100 });
    await queue.idle();
    expect(runs.map((r) => (r.payload as { to: string }).to)).toEqual(['now@x']);
    // NOTE: real time: bounded by a deadline, not a fixed sleep (a loaded machine runs timers late)
    for (const until = Date.now() + 5_000; runs.length < 2 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
    await queue.idle();
    expect(runs.map((r) => (r.payload as { to: string }).to)).toEqual(['now@x', 'soon@x']);
    expect(runs[1].at - before).toBeGreaterThanOrEqual(100);
  });

  it("auto mode with Jest's fake timers: advancing them runs what falls due, timeouts included", async () => {
    jest.useFakeTimers({ now: START });
    moduleRef = await start({ run: 'auto' });
    const queue = moduleRef.get(TestQueue);
    const submit = moduleRef.get(TaskSubmitService);
    await submit.submit('mail', { to: 'later@x' }, { delay: 30 * 60_000 });
    await submit.submit('mail', { to: 'hang@x', hang: true });
    await jest.advanceTimersByTimeAsync(0);
    expect(runs.map((r) => (r.payload as { to: string }).to)).toEqual(['hang@x']);
    await jest.advanceTimersByTimeAsync(200);
    expect((await moduleRef.get(TaskInspectorService).getTask('mail', '#2')).lastError).toMatchObject({ name: 'TaskTimeoutError', attempts: 1, failedAt: START + 200 });
    await jest.advanceTimersByTimeAsync(30 * 60_000);
    await queue.idle();
    expect(runs.map((r) => (r.payload as { to: string }).to)).toEqual(['hang@x', 'hang@x', 'later@x']);
    expect(runs[2].at).toBe(START + 30 * 60_000);
  });

  it('leaves no timer, handle or pending work behind after close', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    moduleRef = await start({ run: 'auto' });
    const submit = moduleRef.get(TaskSubmitService);
    await submit.submit('mail', { to: 'far@x' }, { delay: 3_600_000 });
    await submit.submit('mail', { to: 'hang@x', hang: true });
    const waiting = submit.submitAndWait('mail', { to: 'wait@x' }, { delay: 3_600_000 });
    await moduleRef.close();
    moduleRef = undefined;
    await expect(waiting).rejects.toThrow();
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before);
  });

  it('expectSubmitted / expectNotSubmitted / getSubmitted read what was submitted, with clear failures', async () => {
    moduleRef = await start();
    const queue = moduleRef.get(TestQueue);
    await moduleRef.get(Mailer).welcome('a@x');
    await moduleRef.get(Mailer).welcome('b@x');
    queue.expectSubmitted('mail');
    queue.expectSubmitted('mail', { to: 'a@x' }, 1);
    queue.expectSubmitted('mail', { to: expect.stringMatching(/@x$/) }, 2);
    queue.expectSubmitted('mail', (payload: { to: string }) => payload.to.startsWith('b'));
    queue.expectNotSubmitted('mail', { to: 'c@x' });
    expect(queue.getSubmitted('mail')).toEqual([
      { type: 'mail', id: '#1', payload: { to: 'a@x' }, dueAt: START + 60_000, priority: 0, submittedAt: START },
      { type: 'mail', id: '#2', payload: { to: 'b@x' }, dueAt: START + 60_000, priority: 0, submittedAt: START },
    ]);
    expect(() => queue.expectSubmitted('mail', { to: 'c@x' })).toThrow(AssertionError);
    expect(() => queue.expectSubmitted('mail', { to: 'c@x' })).toThrow(/expected at least one task of type "mail" matching \{ to: 'c@x' \}, found 0; submitted \(2\):\n  #1: \{ to: 'a@x' \}/);
    expect(() => queue.expectSubmitted('mail', undefined, 3)).toThrow(/expected 3 tasks of type "mail", found 2/);
    expect(() => queue.expectNotSubmitted('mail', { to: 'a@x' })).toThrow(/expected 0 tasks of type "mail" matching/);
    queue.reset();
    expect(() => queue.expectSubmitted('mail')).toThrow(/none was submitted/);
    expect(() => queue.expectNotSubmitted('mial')).toThrow(UnknownTaskTypeError);
    expect(() => queue.getSubmitted('mial')).toThrow(UnknownTaskTypeError);
    queue.reset();
    expect(queue.getSubmitted()).toEqual([]);
    expect(await moduleRef.get(TaskSubmitService).submit('mail', { to: 'again@x' })).toBe('#1');
  });

  it('reset forgets tasks and submits, and the schedules tick on from now', async () => {
    moduleRef = await start();
    const queue = moduleRef.get(TestQueue);
    await queue.advanceBy(86_400_000);
    expect(ticks).toEqual([START + 3 * 3_600_000]);
    queue.reset();
    await queue.advanceBy(2 * 86_400_000);
    expect(ticks).toEqual([START + 3 * 3_600_000, START + 27 * 3_600_000, START + 51 * 3_600_000]);
  });

  it('workerOptions lays test options over a worker\'s own: a short timeout, no jitter', async () => {
    moduleRef = await start({ workerOptions: { mail: { timeoutMs: 20, maxAttempts: 3, backoff: { type: 'exponential', delayMs: 100 } } } });
    const queue = moduleRef.get(TestQueue);
    const id = await moduleRef.get(TaskSubmitService).submit('mail', { to: 'slow@x', hang: true });
    await queue.advanceBy(1_000);
    expect(runs.map((r) => r.at - START)).toEqual([0, 100, 300]);
    expect(await queue.getTask('mail', id)).toMatchObject({ state: 'dead', lastError: { name: 'TaskTimeoutError', message: 'Task timed out after 20 ms', attempts: 3 } });
  });

  it('runTask calls the worker as the engine would: JSON payload, its result, its error, its timeout', async () => {
    moduleRef = await start();
    const queue = moduleRef.get(TestQueue);
    await expect(queue.runTask('mail', { to: 'x@y', when: new Date(START) } as never)).resolves.toBe('sent to x@y');
    expect(runs[0].payload).toEqual({ to: 'x@y', when: new Date(START).toISOString() });
    await expect(queue.runTask('mail', { to: 'x@y', fail: true })).rejects.toThrow('no mailbox x@y');
    await expect(queue.runTask('mail', { to: 'x@y', hang: true })).rejects.toBeInstanceOf(TaskTimeoutError);
    await expect(queue.runTask('sms', {})).rejects.toBeInstanceOf(UnknownTaskTypeError);
    await expect(queue.runTask('mail', { to: 1n } as never)).rejects.toBeInstanceOf(InvalidPayloadError);
    await expect(queue.runTask('mail', { to: 'x@y' }, { key: 'k' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(queue.runTask('mail', { to: 'x@y' }, { id: 'm-1', attempt: 2, dueAt: 5 })).resolves.toBe('sent to x@y');
    expect(queue.getSubmitted()).toEqual([]);
  });

  it('runTask gives an ordered worker its key and fence', async () => {
    const seen: unknown[] = [];
    @TaskWorker('ledger', { ordered: true })
    class LedgerWorker {
      handle(task: Task<{ amount: number }>): void {
        seen.push({ key: task.key, fence: task.fence, payload: task.payload, attempt: task.attempt });
      }
    }
    const ref = await Test.createTestingModule({ imports: [DistributedQueueTestingModule.forRoot({ route: { qId: 'l', partitions: 8 } })], providers: [LedgerWorker] }).compile();
    moduleRef = ref;
    await ref.get(TestQueue).runTask('ledger', { amount: 5 }, { key: 'acct-7' });
    await ref.get(TestQueue).runTask('ledger', { amount: 6 });
    expect(seen).toEqual([
      { key: 'acct-7', fence: { partition: expect.any(Number), epoch: 1 }, payload: { amount: 5 }, attempt: 1 },
      { key: 'test', fence: { partition: expect.any(Number), epoch: 1 }, payload: { amount: 6 }, attempt: 1 },
    ]);
  });
});

describe('ordered tasks, reset and close', () => {
  let moduleRef: TestingModule | undefined;
  const started: string[] = [];
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
    started.length = 0;
  });

  @TaskWorker('acct', { ordered: true })
  class AcctWorker {
    async handle(task: Task<{ n: number; hang?: boolean }>, signal: AbortSignal): Promise<void> {
      started.push(`${task.key}:${task.payload.n}`);
      if (task.payload.hang) await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
    }
  }

  @TaskWorker('slow')
  class SlowWorker {
    async handle(_task: Task, signal: AbortSignal): Promise<void> {
      started.push('slow');
      await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
    }
  }

  const open = async (): Promise<TestingModule> => {
    const ref = await Test.createTestingModule({
      imports: [DistributedQueueTestingModule.forRoot({ now: START, route: { qId: 'q', partitions: 2 } })], providers: [AcctWorker, SlowWorker, MailWorker],
    }).compile();
    await ref.init();
    return ref;
  };

  it('records ordered submits (now and delayed) with their key', async () => {
    moduleRef = await open();
    const submit = moduleRef.get(TaskSubmitService);
    const queue = moduleRef.get(TestQueue);
    const now = await submit.submitOrdered('acct', 'a', { n: 1 });
    const later = await submit.submitOrdered('acct', 'b', { n: 2 }, { delay: 5_000 });
    expect(queue.getSubmitted('acct')).toEqual([
      { type: 'acct', id: now.id, key: 'a', payload: { n: 1 }, dueAt: START, priority: 0, submittedAt: START },
      { type: 'acct', id: later.id, key: 'b', payload: { n: 2 }, dueAt: START + 5_000, priority: 0, submittedAt: START },
    ]);
    queue.expectSubmitted('acct', { n: 2 }, 1);
    await queue.advanceBy(5_000);
    expect(started).toEqual(['a:1', 'b:2']);
    expect(queue.getSubmitted('acct')).toHaveLength(2);
  });

  it('reset forgets ordered tasks, dead letters, group settings and limit overrides too', async () => {
    moduleRef = await open();
    const submit = moduleRef.get(TaskSubmitService);
    const queue = moduleRef.get(TestQueue);
    await moduleRef.get(QueueControlService).pause('acct');
    await submit.submitOrdered('acct', 'a', { n: 1 });
    await moduleRef.get(TaskGroupsService).pauseGroup('mail', 'g');
    await moduleRef.get(QueueControlService).setGlobalConcurrency('mail', 1);
    queue.reset();
    expect(await moduleRef.get(TaskInspectorService).getCounts('acct')).toMatchObject({ ready: 0, running: 0, dead: 0 });
    expect(await moduleRef.get(QueueControlService).isPaused('acct')).toBe(false);
    expect(await moduleRef.get(TaskGroupsService).getGroup('mail', 'g')).toMatchObject({ paused: false });
    expect((await moduleRef.get(QueueControlService).getLimits('mail')).globalConcurrency.override).toBeUndefined();
    expect(await queue.runDue()).toBe(0);
  });

  it('close aborts running handlers (delay and ordered) and starts nothing again', async () => {
    moduleRef = await open();
    const submit = moduleRef.get(TaskSubmitService);
    const queue = moduleRef.get(TestQueue);
    await submit.submit('slow', {});
    await submit.submitOrdered('acct', 'a', { n: 1, hang: true });
    const running = queue.runDue();
    await new Promise((r) => setImmediate(r));
    expect(started.sort()).toEqual(['a:1', 'slow']);
    await moduleRef.close();
    moduleRef = undefined;
    await running;
    await new Promise((r) => setTimeout(r, 20));
    expect(started).toEqual(['a:1', 'slow']);
  });

  it('refuses a runTask key an ordered submit would refuse, and workerOptions for a type no worker runs', async () => {
    moduleRef = await open();
    await expect(moduleRef.get(TestQueue).runTask('acct', { n: 1 }, { key: '' })).rejects.toBeInstanceOf(InvalidSubmitOptionsError);
    await moduleRef.close();
    const ref = await Test.createTestingModule({ imports: [DistributedQueueTestingModule.forRoot({ workerOptions: { mial: { timeoutMs: 5 } } })], providers: [MailWorker] }).compile();
    moduleRef = undefined;
    await expect(ref.init()).rejects.toMatchObject({ option: 'workerOptions.mial' });
    // NOTE: Nest's close() of a context whose init failed rethrows that failure
    await expect(ref.close()).rejects.toMatchObject({ option: 'workerOptions.mial' });
  });
});

describe('the rest of the real module', () => {
  let moduleRef: TestingModule | undefined;
  afterEach(async () => moduleRef?.close());

  it('provides the health indicator (up, no Redis) and the history service (not configured, as without `history`)', async () => {
    moduleRef = await start();
    expect(await moduleRef.get(DistributedQueueHealthIndicator).isHealthy('queues')).toEqual({
      queues: { status: 'up', redis: { status: 'up', message: expect.stringContaining('not used') }, consumers: { mail: { status: 'up', message: 'in memory (testing module)' } } },
    });
    const history = moduleRef.get(TaskHistoryService);
    expect(history.enabled).toBe(false);
    await expect(history.getHistory('mail', 'x')).rejects.toBeInstanceOf(HistoryNotConfiguredError);
    await expect(history.flush()).rejects.toBeInstanceOf(HistoryNotConfiguredError);
  });
});

describe('typed helpers compile against contracts', () => {
  it('is only a compile check', () => {
    const check = (queue: TestQueue, task: Task<{ a: number }>): void => {
      queue.expectSubmitted<{ a: number }>('t', { a: task.payload.a });
    };
    expect(typeof check).toBe('function');
  });
});
