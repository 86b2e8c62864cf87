/**
 * Conformance: a failure no retry can fix (`UnrecoverableError`), delay queue and route queue.
 *
 * Pins down:
 * - a handler that throws UnrecoverableError (attempts left: 3 of 3) fails that attempt and its task is dead at
 *   once: attempts 1, lastError named UnrecoverableError with its message; no later attempt runs; local
 *   events `failed` then `dead`, never `retrying`;
 * - an error of another class named 'UnrecoverableError' (BullMQ's) counts the same; an ordinary Error is
 *   retried as before;
 * - a re-drive runs it again (attempt 1); a waiter (`submitAndWait`) gets TaskDeadError naming it, at once;
 * - ordered: the task is a dead letter after one attempt and the key's next task runs;
 * - a flow node: dead after one attempt, its dependent blocked, the flow failed.
 */
import { Inject, Injectable } from '@nestjs/common';
import { OnTaskEvent, TaskDeadError, TaskFlowService, UnrecoverableError, type Task, type TaskEvent } from 'nestjs-distributed-queue';
import { workerClass } from '../support/queue-app';
import { describeEngines, rejectionOf, until, type EngineOptions } from './engine';

interface Job {
  how: 'ours' | 'foreign' | 'plain' | 'ok';
  n?: number;
}

const attempts: string[] = [];
const events: string[] = [];

/** A class like BullMQ's: another class, the same name. */
class ForeignUnrecoverable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnrecoverableError';
  }
}

const fail = (task: Task<Job>): void => {
  attempts.push(`${task.id}#${task.attempt}`);
  const { how } = task.payload;
  if (how === 'ours') throw new UnrecoverableError(`declined ${task.id}`, { cause: new Error('card') });
  if (how === 'foreign') throw new ForeignUnrecoverable(`gone ${task.id}`);
  if (how === 'plain') throw new Error(`flaky ${task.id}`);
};
const Delay = workerClass<Job>('un', { concurrency: 1, maxAttempts: 3, backoff: { type: 'fixed', delayMs: 300, jitter: 0 } }, fail);
const Ordered = workerClass<Job>('uo', { ordered: true, maxAttempts: 3, backoff: { type: 'fixed', delayMs: 300, jitter: 0 } }, fail);

@Injectable()
class Listener {
  @OnTaskEvent('*', ['failed', 'retrying', 'dead'])
  heard(event: TaskEvent): void {
    events.push(`${event.task.id} ${event.event}`);
  }
}
let flows!: TaskFlowService;

/** Not a worker: hands the case the engine's TaskFlowService. */
@Injectable()
class FlowsProbe {
  constructor(@Inject(TaskFlowService) service: TaskFlowService) {
    flows = service;
  }
}
const ROUTE: EngineOptions = { route: { qId: 'cu', partitions: 2 } };

describeEngines('unrecoverable failures', (start) => {
  afterEach(() => {
    attempts.length = 0;
    events.length = 0;
  });

  it('UnrecoverableError dead-letters a delay-queue task at once, with failed then dead; a plain Error retries', async () => {
    const engine = await start({}, [Delay, Listener]);
    await engine.submit.submit('un', { how: 'ours' }, { id: 'u1' });
    await engine.submit.submit('un', { how: 'plain' }, { id: 'p1' });
    await engine.settle(['un']);
    expect(await engine.inspect.getTask('un', 'u1')).toEqual({
      id: 'u1', type: 'un', state: 'dead', attempts: 1, dueAt: expect.any(Number), payload: { how: 'ours' },
      lastError: { name: 'UnrecoverableError', message: 'declined u1', attempts: 1, failedAt: expect.any(Number), stack: expect.stringMatching(/^UnrecoverableError: declined u1\n/) },
    });
    expect(await engine.inspect.getTask('un', 'p1')).toMatchObject({ state: 'delayed', attempts: 1 });
    await engine.advance(700);
    expect(attempts.filter((a) => a.startsWith('u1'))).toEqual(['u1#1']);
    expect(attempts.filter((a) => a.startsWith('p1'))).toEqual(['p1#1', 'p1#2', 'p1#3']);
    expect(events.filter((e) => e.startsWith('u1'))).toEqual(['u1 failed', 'u1 dead']);
    expect((await engine.inspect.listDead('un')).tasks.map((t) => [t.id, t.error.name, t.error.attempts])).toEqual(
      expect.arrayContaining([['u1', 'UnrecoverableError', 1]]),
    );
  });

  it("an error of another class named 'UnrecoverableError' counts the same; a re-drive runs the task again", async () => {
    const engine = await start({}, [Delay]);
    await engine.submit.submit('un', { how: 'foreign' }, { id: 'f1' });
    await engine.settle(['un']);
    expect(await engine.inspect.getTask('un', 'f1')).toMatchObject({ state: 'dead', attempts: 1, lastError: { name: 'UnrecoverableError', message: 'gone f1' } });
    expect(await engine.inspect.redriveDead('un', ['f1'])).toBe(1);
    await engine.settle(['un']);
    expect(attempts).toEqual(['f1#1', 'f1#1']);
    expect(await engine.inspect.getTask('un', 'f1')).toMatchObject({ state: 'dead', attempts: 1 });
  });

  it('a waiter gets TaskDeadError naming the UnrecoverableError after the one attempt', async () => {
    const engine = await start({}, [Delay]);
    const waiting = rejectionOf(engine.submit.submitAndWait('un', { how: 'ours' }, { id: 'w1', timeoutMs: 5_000 }));
    await engine.settle(['un']);
    const failure = await waiting;
    expect(failure).toBeInstanceOf(TaskDeadError);
    expect(failure).toMatchObject({ type: 'un', id: 'w1', error: { name: 'UnrecoverableError', message: 'declined w1', attempts: 1 } });
    expect(attempts).toEqual(['w1#1']);
  });

  it("ordered: the task is a dead letter after one attempt and its key's next task runs", async () => {
    const engine = await start(ROUTE, [Ordered, Listener]);
    await engine.submit.submitOrdered('uo', 'acct', { how: 'ours', n: 1 }, { id: 'o1' });
    await engine.submit.submitOrdered('uo', 'acct', { how: 'ok', n: 2 }, { id: 'o2' });
    await engine.settle(['uo']);
    expect(attempts).toEqual(['o1#1', 'o2#1']);
    const dead = await engine.inspect.listOrderedDead();
    expect(dead.map((d) => [d.id, d.key, d.error.name, d.error.message])).toEqual([['o1', 'acct', 'UnrecoverableError', 'declined o1']]);
    expect(events.filter((e) => e.startsWith('o1'))).toEqual(['o1 failed', 'o1 dead']);
  });

  it('a flow node: dead after its one attempt, its dependent blocked, the flow failed', async () => {
    const engine = await start({}, [Delay, FlowsProbe]);
    await flows.submitFlow([
      { ref: 'charge', type: 'un', payload: { how: 'ours' } },
      { ref: 'ship', type: 'un', payload: { how: 'ok' }, dependsOn: ['charge'] },
    ], { id: 'order' });
    await engine.settle(['un']);
    const flow = await until(async () => {
      const info = await flows.getFlow('order');
      return info?.state === 'failed' ? info : null;
    }, 'the flow failed');
    expect(Object.fromEntries(flow.nodes.map((n) => [n.ref, n.state]))).toEqual({ charge: 'dead', ship: 'blocked' });
    expect(attempts).toEqual(['&order:charge#1']);
  });
});
