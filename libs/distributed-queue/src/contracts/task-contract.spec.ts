import 'reflect-metadata';
import { TASK_WORKER_METADATA } from '../distributed-queue.constants';
import { TaskWorker, type TaskWorkerMetadata } from '../decorators/task-worker.decorator';
import { InvalidOptionsError, InvalidTaskTypeError } from '../errors';
import { defineTask, isTaskContract, typeOf } from './task-contract';

/** The metadata `@TaskWorker(...)` records on a fresh class. */
function metadataOf(decorate: ClassDecorator): TaskWorkerMetadata {
  class Worker {
    handle(): void {}
  }
  decorate(Worker);
  return Reflect.getMetadata(TASK_WORKER_METADATA, Worker);
}

describe('defineTask', () => {
  it('returns a frozen token holding the type and whether it is ordered', () => {
    const close = defineTask<{ orderId: string }>('order.close');
    const apply = defineTask<number>('ledger.apply', { ordered: true });
    expect(close).toMatchObject({ type: 'order.close', ordered: false });
    expect(apply).toMatchObject({ type: 'ledger.apply', ordered: true });
    expect(Object.isFrozen(close)).toBe(true);
    expect(JSON.parse(JSON.stringify(apply))).toEqual({ type: 'ledger.apply', ordered: true });
  });

  it.each([['empty', ''], ['white space', 'a b'], ['braces', 'a{b}'], ['201 characters', 'x'.repeat(201)]])('refuses a type that cannot name a queue (%s)', (_case, type) => {
    expect(() => defineTask(type)).toThrow(InvalidTaskTypeError);
  });
});

describe('typeOf and isTaskContract', () => {
  it('resolve a contract to its type and leave anything else as it is', () => {
    const close = defineTask('order.close');
    expect(typeOf(close)).toBe('order.close');
    expect(typeOf('order.close')).toBe('order.close');
    expect(typeOf(42 as unknown as string)).toBe(42);
    expect(isTaskContract(close)).toBe(true);
    expect([{ type: 'order.close', ordered: false }, null, 'order.close'].map(isTaskContract)).toEqual([false, false, false]);
  });
});

describe('@TaskWorker with a contract', () => {
  it('records the type string and takes ordered from the contract', () => {
    const close = defineTask('order.close');
    const apply = defineTask('ledger.apply', { ordered: true });
    expect(metadataOf(TaskWorker(close, { concurrency: 2 }) as ClassDecorator)).toEqual({
      type: 'order.close', options: { concurrency: 2, ordered: false },
    });
    expect(metadataOf(TaskWorker(apply) as ClassDecorator)).toEqual({ type: 'ledger.apply', options: { ordered: true } });
    expect(metadataOf(TaskWorker(apply, { ordered: true }) as ClassDecorator)).toEqual({ type: 'ledger.apply', options: { ordered: true } });
    expect(metadataOf(TaskWorker('order.close', { concurrency: 2 }))).toEqual({ type: 'order.close', options: { concurrency: 2 } });
  });

  it('refuses an ordered option that contradicts the contract', () => {
    const apply = defineTask('ledger.apply', { ordered: true });
    expect(() => TaskWorker(apply, { ordered: false as true })).toThrow(InvalidOptionsError);
    expect(() => TaskWorker(apply, { ordered: false as true })).toThrow(/ordered/);
  });
});
