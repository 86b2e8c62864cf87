/**
 * Handlers that throw or return anything JavaScript allows: the attempt ends (completed, or failed and dead at
 * its last attempt) with its error recorded as strings, the worker goes on with the next task, and nothing
 * escapes as an unhandled rejection; delay and ordered tasks, on Redis and in the testing module.
 *
 * | cell                                                          | expected                                        |
 * |---------------------------------------------------------------|-------------------------------------------------|
 * | throws null, undefined, 42, a string, {}, a cyclic object, a   | dead (maxAttempts 1), its error a name and a    |
 * | Symbol, a function, an Error with a cyclic cause, an object    | message of strings; the next task runs           |
 * | whose toString throws, a Proxy that throws on every get, an    |                                                 |
 * | Error of a 2 MB message, an Error whose getters throw; rejects | (a thenable whose `then` throws: the attempt     |
 * | with null; returns a thenable whose `then` getter or call      | fails)                                          |
 * | throws                                                        |                                                 |
 * | returns a cyclic object, a BigInt, a function, a Symbol        | completed (the result not kept when not JSON);  |
 * |                                                               | the next task runs                              |
 * | an @OnTaskEvent or onFlowEnded listener doing any of these     | logged; later events heard; no unhandled        |
 * |                                                               | rejection                                       |
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { OnTaskEvent, TaskFlowService, TaskInspectorService, TaskSubmitService, type Task, type TaskEvent } from 'nestjs-distributed-queue';
import { DistributedQueueTestingModule, TestQueue } from 'nestjs-distributed-queue/testing';
import { useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';
import { OUTCOMES } from './support/hostile-outcomes';

const NAMES = Object.keys(OUTCOMES);

/** The handler: runs the task's outcome by its payload's name; `after` marks the sentinel that must run last. */
function handlerOf(ran: string[]) {
  return (task: Task<{ name: string }>) => {
    ran.push(task.payload.name);
    return task.payload.name === 'after' ? 'ok' : OUTCOMES[task.payload.name]();
  };
}

/** Every outcome's task ended: the throwing ones dead with string errors, the others done; the sentinel ran. */
async function expectEnded(inspect: TaskInspectorService, type: string): Promise<void> {
  const dead = await inspect.listDead(type, 0, 100);
  const died = dead.tasks.map((t) => (t.payload as { name: string }).name).sort();
  expect(died).toEqual(NAMES.filter((n) => n.startsWith('throw:')).sort());
  for (const t of dead.tasks) {
    expect({ name: typeof t.error.name, message: typeof t.error.message }).toEqual({ name: 'string', message: 'string' });
    expect(t.error.message.length).toBeLessThan(100_000);
  }
}

describe.each(getTargets().map((t) => [t.name, t] as const))('handlers that throw or return anything on %s', (_name, target) => {
  const { start } = useQueueApps(target);

  it('delay tasks end, typed; the worker goes on', async () => {
    const ran: string[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const keyPrefix = uniquePrefix('handler-garbage');
      const app = await start({ connection: target.connection, keyPrefix }, [workerClass('hg', { maxAttempts: 1, concurrency: 1, pollIntervalMs: 50 }, handlerOf(ran))]);
      for (const name of [...NAMES, 'after']) await app.submit.submit('hg', { name }, { id: name.replace(':', '-') });
      await waitFor(() => ran.includes('after'), { timeoutMs: 20_000, message: 'the sentinel ran after every outcome' });
      await waitFor(async () => (await app.inspect.getCounts('hg')).running === 0, { timeoutMs: 10_000 });
      await expectEnded(app.inspect, 'hg');
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  }, 60_000);

  it('ordered tasks end, typed; the key goes on in order', async () => {
    const ran: string[] = [];
    const keyPrefix = uniquePrefix('handler-garbage-o');
    const app = await start(
      { connection: target.connection, keyPrefix, route: routeTestOptions(keyPrefix, 'm1', 2) },
      [workerClass('hgo', { ordered: true, maxAttempts: 1 }, handlerOf(ran))],
    );
    await app.submit.submitOrderedMany('hgo', [...NAMES, 'after'].map((name) => ({ key: 'k', payload: { name } })));
    await waitFor(() => ran.includes('after'), { timeoutMs: 20_000, message: 'the sentinel ran after every outcome' });
    expect(ran).toEqual([...NAMES, 'after']);
    const dead = await waitFor(async () => {
      const letters = await app.inspect.listOrderedDead();
      return letters.length >= NAMES.filter((n) => n.startsWith('throw:')).length ? letters : null;
    }, { timeoutMs: 10_000, message: 'dead letters' });
    for (const letter of dead) expect({ name: typeof letter.error.name, message: typeof letter.error.message }).toEqual({ name: 'string', message: 'string' });
  }, 60_000);
});

describe('listeners that throw or return anything', () => {
  const target = getTargets()[0];
  const { start } = useQueueApps(target);

  it('@OnTaskEvent and onFlowEnded listeners: logged, the next event still heard, no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const outcomes = Object.values(OUTCOMES);
    const heard: string[] = [];
    let n = 0;
    @Injectable()
    class Listener {
      @OnTaskEvent('hl', 'completed')
      on(event: TaskEvent): unknown {
        heard.push(event.task.id);
        return outcomes[n++ % outcomes.length]();
      }
    }
    try {
      const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('listener-garbage') }, [workerClass('hl', { concurrency: 1 }, () => 'ok'), Listener]);
      const flows = app.app.get(TaskFlowService);
      const ended: string[] = [];
      let m = 0;
      flows.onFlowEnded((event) => {
        ended.push(event.flowId);
        return outcomes[m++ % outcomes.length]() as void;
      });
      const ids = Object.keys(OUTCOMES).map((name) => name.replace(':', '-'));
      for (const id of ids) await app.submit.submit('hl', {}, { id });
      for (const id of ids) await flows.submitFlow([{ ref: 'a', type: 'hl', payload: {} }], { id });
      await waitFor(() => heard.length >= ids.length * 2 && ended.length >= ids.length, { timeoutMs: 20_000, message: 'every event heard' });
      await sleep(200);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  }, 60_000);
});

describe('handlers that throw or return anything in the testing module', () => {
  it('delay tasks end, typed', async () => {
    const ran: string[] = [];
    @Module({ imports: [DistributedQueueTestingModule.forRoot({})], providers: [workerClass('hg', { maxAttempts: 1 }, handlerOf(ran))] })
    class MemoryModule {}
    const app = await NestFactory.createApplicationContext(MemoryModule, { logger: false, abortOnError: false });
    await app.init();
    try {
      const submit = app.get(TaskSubmitService);
      for (const name of [...NAMES, 'after']) await submit.submit('hg', { name }, { id: name.replace(':', '-') });
      await app.get(TestQueue).drain();
      expect(ran).toEqual([...NAMES, 'after']);
      await expectEnded(app.get(TaskInspectorService), 'hg');
    } finally {
      await app.close();
    }
  });
});
