import { Injectable } from '@nestjs/common';
import { defineTask, TaskWorker, type PayloadOf, type Task, type TaskHandler } from 'nestjs-distributed-queue';
import { useQueueApps } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const Greet = defineTask<{ name: string }>('typed.greet');
const Apply = defineTask<{ n: number }>('typed.apply', { ordered: true });

describe.each(getTargets().map((t) => [t.name, t] as const))('typed task contracts on %s', (_name, target) => {
  const { start } = useQueueApps(target);

  it('a contract worker runs what submit(contract) sends; cancel, reschedule and the inspector take the contract', async () => {
    const seen: string[] = [];
    @TaskWorker(Greet, { pollIntervalMs: 100, maxAttempts: 1 })
    @Injectable()
    class GreetWorker implements TaskHandler<PayloadOf<typeof Greet>> {
      handle(task: Task<PayloadOf<typeof Greet>>): void {
        if (task.payload.name === 'fail') throw new Error('no greeting');
        seen.push(`${task.type}:${task.payload.name}`);
      }
    }
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('typed-delay') }, [GreetWorker]);
    const { submit, inspect } = app;

    expect(await submit.submit(Greet, { name: 'a' }, { id: 'a' })).toBe('a');
    await waitFor(() => seen.includes('typed.greet:a'), { message: 'the contract task ran' });
    await waitFor(async () => (await inspect.getState(Greet, 'a')) === 'done', { message: 'the contract task is done' });
    // The contract stands for its type string: a string submit reaches the same worker.
    await submit.submit('typed.greet', { name: 'b' });
    await waitFor(() => seen.includes('typed.greet:b'), { message: 'the string task ran' });

    await submit.submitMany(Greet, [{ payload: { name: 'later' }, id: 'later', delay: 60_000 }, { payload: { name: 'gone' }, id: 'gone', delay: 60_000 }]);
    const waiting = await inspect.getTask(Greet, 'later');
    expect(waiting).toMatchObject({ id: 'later', type: 'typed.greet', state: 'delayed', payload: { name: 'later' } });
    expect(await submit.cancel(Greet, 'gone')).toBe('cancelled');
    expect(await submit.reschedule(Greet, 'later', { delay: 0 })).toBe(true);
    await waitFor(() => seen.includes('typed.greet:later'), { message: 'the rescheduled task ran' });
    expect(seen).not.toContain('typed.greet:gone');

    await submit.submit(Greet, { name: 'fail' }, { id: 'f' });
    const dead = await waitFor(async () => {
      const list = await inspect.listDead(Greet);
      return list.total === 1 ? list.tasks : null;
    }, { message: 'the failing task is dead-lettered' });
    expect(dead[0]).toMatchObject({ id: 'f', type: 'typed.greet', payload: { name: 'fail' }, error: { message: 'no greeting' } });
    expect(await inspect.redriveDead(Greet, ['f'])).toBe(1);
    await waitFor(async () => (await inspect.listDead(Greet)).total === 1, { message: 'dead again after the re-drive' });
    expect(await inspect.deleteDead(Greet, ['f'])).toBe(1);
    expect((await inspect.listDead(Greet)).total).toBe(0);
  });

  it('an ordered contract: the worker is ordered without the option, submitOrdered(contract) keeps the order per key', async () => {
    const seen: string[] = [];
    @TaskWorker(Apply, { concurrency: 4 })
    @Injectable()
    class ApplyWorker implements TaskHandler<PayloadOf<typeof Apply>> {
      async handle(task: Task<PayloadOf<typeof Apply>>): Promise<void> {
        await new Promise((resolve) => setTimeout(resolve, 2));
        seen.push(`${task.type}:${task.key}${task.payload.n}`);
      }
    }
    const app = await start(
      { connection: target.connection, keyPrefix: uniquePrefix('typed-route'), route: routeTestOptions('q-typed', 'solo', 2) },
      [ApplyWorker],
    );
    for (let n = 0; n < 5; n++) {
      expect((await app.submit.submitOrdered(Apply, 'a', { n })).outcome).toBe('queued');
    }
    const many = await app.submit.submitOrderedMany(Apply, [0, 1, 2, 3, 4].map((n) => ({ key: 'b', payload: { n } })));
    expect(many.map((r) => r.outcome)).toEqual(Array(5).fill('queued'));
    expect((await app.submit.submitOrdered(Apply, 'c', { n: 0 }, { delay: 50 })).outcome).toBe('scheduled');
    await waitFor(() => seen.length === 11, { message: 'all ordered tasks ran' });
    for (const key of ['a', 'b']) {
      expect(seen.filter((s) => s.startsWith(`typed.apply:${key}`))).toEqual([0, 1, 2, 3, 4].map((n) => `typed.apply:${key}${n}`));
    }
    expect(seen).toContain('typed.apply:c0');
    // A plain submit of an ordered contract's type is refused at run time too, as for a type string.
    await expect(app.submit.submit(Apply.type, { n: 9 })).rejects.toThrow(/is ordered/);
  });
});
