/*
 * A failed attempt's error keeps its stack (issue 26 item 5), bounded to MAX_STACK_BYTES of whole lines: in the
 * dead letter (inspector and dashboard JSON), the `failed` and `dead` events (local and fleet), the history row
 * and the line logged for the attempt; for both engines, on both targets (the cluster puts a delay type's
 * stream and the route partitions' streams on different masters). A thrown value that is not an Error has no
 * stack and fails as before. Service mode (the stack comes back over HTTP): service-stacks.e2e-spec.ts.
 * Fleet listeners and the history writer are in different tests; the two on one stream (the writer once
 * trimmed entries a follower had not read): history-followers.e2e-spec.ts.
 */
import { Injectable, Module, type INestApplication, type LoggerService, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  DistributedQueueDashboardModule, DistributedQueueModule, MAX_STACK_BYTES, OnTaskEvent, TaskHistoryService, TaskInspectorService, TaskSubmitService,
  type DistributedQueueModuleOptions, type Task, type TaskEvent,
} from 'nestjs-distributed-queue';
import { TOKEN } from './support/dashboard';
import { PG_URL, useSchemaNames } from './support/pg';
import { workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

/** The handler's own function: its name must be in every stack kept. */
function failInStackTestHandler(id: string): never {
  throw new RangeError(`stack test failure of ${id}`);
}

/** Throws from `depth` nested calls, with every frame in the stack: thousands of lines. */
function failDeep(depth: number): never {
  if (depth > 0) failDeep(depth - 1);
  throw new Error('deep failure');
}

/** What each task id's handler does: its payload names how it fails. */
function fail(how: string, id: string): never {
  if (how === 'deep') {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = Infinity;
    try {
      failDeep(3000);
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
  if (how === 'string') throw 'a plain string';
  if (how === 'object') throw { code: 7 };
  failInStackTestHandler(id);
}

/** Keeps what the library logs at warn and error. */
class CapturingLogger implements LoggerService {
  readonly lines: { level: 'warn' | 'error'; text: string }[] = [];
  log(): void {}
  debug(): void {}
  verbose(): void {}
  warn(message: unknown): void {
    this.lines.push({ level: 'warn', text: String(message) });
  }
  error(message: unknown): void {
    this.lines.push({ level: 'error', text: String(message) });
  }
}

/** Listens to the `failed` and `dead` events of `type`, local and fleet. */
function listeners(type: string) {
  const seen: TaskEvent[] = [];
  @Injectable()
  class Listeners {
    @OnTaskEvent(type, ['failed', 'dead'], { scope: 'local' })
    local(event: TaskEvent): void {
      seen.push(event);
    }

    @OnTaskEvent(type, ['failed', 'dead'], { scope: 'fleet' })
    fleet(event: TaskEvent): void {
      seen.push(event);
    }
  }
  const of = (id: string, scope: 'local' | 'fleet', event: 'failed' | 'dead') => seen.filter((e) => e.task.id === id && e.scope === scope && e.event === event);
  return { Listeners, seen, of };
}

const bytes = (text: string | undefined) => Buffer.byteLength(text ?? '');
/** A stack cut to the bound: within it, ending with the line that says how many lines were cut. */
const isTrimmed = (stack: string | undefined) => !!stack && bytes(stack) <= MAX_STACK_BYTES && /\n {4}\.\.\. \d+ more lines$/.test(stack);

describe.each(getTargets().map((t) => [t.name, t] as const))('failure stacks on %s', (_name, target) => {
  const newSchema = useSchemaNames();
  const apps: INestApplication[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });

  /** An HTTP app with the queue module, the dashboard, and `providers`; its logs captured. */
  async function start(options: Partial<DistributedQueueModuleOptions>, providers: Type<unknown>[]) {
    @Module({ imports: [DistributedQueueModule.forRoot({ connection: target.connection, ...options }), DistributedQueueDashboardModule.forRoot({ token: TOKEN })], providers })
    class StackTestModule {}
    const logger = new CapturingLogger();
    const app = await NestFactory.create(StackTestModule, { logger });
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    const base = `${await app.getUrl()}/queues`.replace('[::1]', '127.0.0.1');
    const dashboard = async (path: string) => (await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json();
    return { app, logger, dashboard, submit: app.get(TaskSubmitService), inspect: app.get(TaskInspectorService) };
  }

  it("delay queue: the handler's stack is in the dead letter, the dashboard's task JSON, the events and the log", async () => {
    const { Listeners, of } = listeners('stk');
    const Worker = workerClass<string>('stk', { maxAttempts: 2, backoff: { type: 'fixed', delayMs: 10 } }, (task: Task<string>) => fail(task.payload, task.id));
    const { logger, dashboard, submit, inspect } = await start({ keyPrefix: uniquePrefix('stacks-delay') }, [Worker, Listeners]);
    await submit.submitMany('stk', ['named', 'deep', 'string', 'object'].map((id) => ({ id, payload: id })));
    await waitFor(async () => (await inspect.getCounts('stk')).dead === 4, { timeoutMs: 20_000, message: 'every task dead' });
    const dead = new Map((await inspect.listDead('stk')).tasks.map((t) => [t.id, t.error]));

    // The named failure: its stack, as thrown, everywhere.
    const named = dead.get('named')!;
    expect(named).toMatchObject({ name: 'RangeError', message: 'stack test failure of named', attempts: 2 });
    expect(named.stack).toMatch(/^RangeError: stack test failure of named\n {4}at failInStackTestHandler /);
    expect((await inspect.getTask('stk', 'named')).lastError?.stack).toBe(named.stack);
    expect(((await dashboard('/api/types/stk/tasks/named')) as { lastError: { stack: string } }).lastError.stack).toBe(named.stack);
    const deadPage = (await dashboard('/api/types/stk/tasks?state=dead')) as { tasks: { id: string; lastError: { stack?: string } }[] };
    expect(deadPage.tasks.find((t) => t.id === 'named')?.lastError.stack).toBe(named.stack);
    await waitFor(() => of('named', 'fleet', 'dead').length === 1 && of('named', 'fleet', 'failed').length === 2, { timeoutMs: 10_000, message: 'fleet events' });
    for (const scope of ['local', 'fleet'] as const) {
      const events = [...of('named', scope, 'failed'), ...of('named', scope, 'dead')];
      expect([scope, events.length]).toEqual([scope, 3]);
      for (const e of events) expect([scope, e.event, e.error?.stack]).toEqual([scope, e.event, expect.stringContaining('at failInStackTestHandler ')]);
    }
    expect(of('named', 'fleet', 'dead')[0].error?.stack).toBe(named.stack);
    // The line logged for each attempt: a warning for the retried one, an error for the last, each with the stack under it.
    const logged = logger.lines.filter((l) => l.text.includes('task named attempt'));
    expect(logged.map((l) => l.level)).toEqual(['warn', 'error']);
    for (const l of logged) expect(l.text).toMatch(/failed \(RangeError: stack test failure of named\): (retried|dead)\nRangeError: stack test failure of named\n {4}at failInStackTestHandler /);

    // Thousands of frames: cut to the bound after whole lines, the same in every place.
    const deep = dead.get('deep')!;
    expect(isTrimmed(deep.stack)).toBe(true);
    expect(deep.stack).toMatch(/^Error: deep failure\n {4}at failDeep /);
    await waitFor(() => of('deep', 'fleet', 'dead').length === 1, { timeoutMs: 10_000, message: 'fleet dead of deep' });
    expect(of('deep', 'fleet', 'dead')[0].error?.stack).toBe(deep.stack);
    const deepLog = logger.lines.filter((l) => l.text.includes('task deep attempt'));
    expect(deepLog.map((l) => l.level)).toEqual(['warn', 'error']);
    // NOTE: each attempt's stack is its own (the frames under the handler, and so the count of lines cut, may differ)
    for (const l of deepLog) expect(isTrimmed(l.text.slice(l.text.indexOf('\n') + 1))).toBe(true);
    expect(deepLog[1].text.endsWith(`: dead\n${deep.stack}`)).toBe(true);

    // Not an Error: no stack, the rest as before.
    expect(dead.get('string')).toEqual({ name: 'Error', message: 'a plain string', attempts: 2, failedAt: expect.any(Number) });
    expect(dead.get('object')).toEqual({ name: 'Error', message: '[object Object]', attempts: 2, failedAt: expect.any(Number) });
    await waitFor(() => of('object', 'fleet', 'dead').length === 1, { timeoutMs: 10_000, message: 'fleet dead of object' });
    expect(of('object', 'fleet', 'dead')[0].error).toEqual({ name: 'Error', message: '[object Object]', attempts: 2, failedAt: expect.any(Number) });
    expect(of('string', 'local', 'dead')[0].error).toMatchObject({ message: 'a plain string', stack: undefined });
    expect(logger.lines.find((l) => l.text.includes('task string attempt 2'))?.text).toBe('[stk] task string attempt 2 failed (Error: a plain string): dead');
  });

  it("route queue: an ordered task's stack is in its dead letter, the dashboard listing, the events and the log", async () => {
    const { Listeners, of } = listeners('ostk');
    const Worker = workerClass<string>('ostk', { ordered: true, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 10 } }, (task: Task<string>) => fail(task.payload, task.id));
    const { logger, dashboard, submit, inspect } = await start({ keyPrefix: uniquePrefix('stacks-route'), route: routeTestOptions('qstk', 'm1', 4) }, [Worker, Listeners]);
    await submit.submitOrderedMany('ostk', ['named', 'deep', 'string'].map((id, i) => ({ key: `k${i}`, id, payload: id })));
    const dead = await waitFor(async () => {
      const letters = await inspect.listOrderedDead();
      return letters.length === 3 ? new Map(letters.map((l) => [l.id, l.error])) : null;
    }, { timeoutMs: 20_000, message: 'three ordered dead letters' });

    const named = dead.get('named')!;
    expect(named).toMatchObject({ name: 'RangeError', message: 'stack test failure of named', attempts: 2 });
    expect(named.stack).toMatch(/^RangeError: stack test failure of named\n {4}at failInStackTestHandler /);
    const page = (await dashboard('/api/types/ostk/tasks?state=dead')) as { tasks: { id: string; lastError: { stack?: string } }[] };
    expect(page.tasks.find((t) => t.id === 'named')?.lastError.stack).toBe(named.stack);
    // Ordered tasks: every failed attempt locally; from the fleet, the last one's `failed` and `dead`.
    await waitFor(() => of('named', 'fleet', 'dead').length === 1, { timeoutMs: 10_000, message: 'fleet dead' });
    const events = [...of('named', 'local', 'failed'), ...of('named', 'local', 'dead'), ...of('named', 'fleet', 'failed'), ...of('named', 'fleet', 'dead')];
    expect(events.map((e) => `${e.scope}:${e.event}`)).toEqual(['local:failed', 'local:failed', 'local:dead', 'fleet:failed', 'fleet:dead']);
    for (const e of events) expect(e.error?.stack).toContain('at failInStackTestHandler ');
    expect(of('named', 'fleet', 'dead')[0].error?.stack).toBe(named.stack);
    const logged = logger.lines.filter((l) => /task named \(key k0\) attempt \d failed/.test(l.text));
    expect(logged).toHaveLength(2);
    for (const l of logged) expect(l.text).toMatch(/failed \(RangeError: stack test failure of named\)\nRangeError: stack test failure of named\n {4}at failInStackTestHandler /);

    const deep = dead.get('deep')!;
    expect(isTrimmed(deep.stack)).toBe(true);
    expect(deep.stack).toMatch(/^Error: deep failure\n {4}at failDeep /);
    await waitFor(() => of('deep', 'fleet', 'dead').length === 1, { timeoutMs: 10_000, message: 'fleet dead of deep' });
    expect(of('deep', 'fleet', 'dead')[0].error?.stack).toBe(deep.stack);

    expect(dead.get('string')).toEqual({ name: 'Error', message: 'a plain string', attempts: 2 });
    await waitFor(() => of('string', 'fleet', 'dead').length === 1, { timeoutMs: 10_000, message: 'fleet dead of string' });
    expect(of('string', 'fleet', 'dead')[0].error).toEqual({ name: 'Error', message: 'a plain string', attempts: 2, failedAt: expect.any(Number) });
  });

  it("history rows keep the last failure's stack (delay and ordered types, a retried ordered task too), bounded", async () => {
    const schema = newSchema();
    const Plain = workerClass<string>('hstk', { maxAttempts: 2, backoff: { type: 'fixed', delayMs: 10 } }, (task: Task<string>) => fail(task.payload, task.id));
    const Ordered = workerClass<string>('ohstk', { ordered: true, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 10 } }, (task: Task<string>) => {
      if (task.payload !== 'once' || task.attempt === 1) fail(task.payload, task.id);
    });
    const { app, submit, inspect } = await start(
      { keyPrefix: uniquePrefix('stacks-history'), route: routeTestOptions('qhstk', 'm1', 4), history: { connection: PG_URL, schema, flushIntervalMs: 50 } },
      [Plain, Ordered],
    );
    const history = app.get(TaskHistoryService);
    /** The history row of `id` once it is finished (bounded, flushing). */
    const row = (type: string, id: string) =>
      waitFor(async () => {
        await history.flush();
        const r = await history.getHistory(type, id);
        return r && ['done', 'dead'].includes(r.status) ? r : null;
      }, { timeoutMs: 20_000, message: `history row of ${id}` });
    await submit.submitMany('hstk', ['named', 'deep', 'string'].map((id) => ({ id, payload: id })));
    await submit.submitOrderedMany('ohstk', ['named', 'deep', 'once'].map((id, i) => ({ key: `k${i}`, id, payload: id })));
    const plainDead = new Map((await waitFor(async () => {
      const page = await inspect.listDead('hstk');
      return page.total === 3 ? page.tasks : null;
    }, { timeoutMs: 20_000, message: 'delay tasks dead' })).map((t) => [t.id, t.error]));
    const orderedDead = new Map((await waitFor(async () => {
      const letters = await inspect.listOrderedDead();
      return letters.length === 2 ? letters : null;
    }, { timeoutMs: 20_000, message: 'ordered tasks dead' })).map((l) => [l.id, l.error]));

    for (const [type, letters] of [['hstk', plainDead], ['ohstk', orderedDead]] as const) {
      const named = await row(type, 'named');
      expect([type, named.status, named.lastError]).toEqual([type, 'dead', { name: 'RangeError', message: 'stack test failure of named', stack: letters.get('named')!.stack }]);
      expect(named.lastError?.stack).toMatch(/^RangeError: stack test failure of named\n {4}at failInStackTestHandler /);
      const deep = await row(type, 'deep');
      expect(isTrimmed(deep.lastError?.stack)).toBe(true);
      expect(deep.lastError?.stack).toBe(letters.get('deep')!.stack);
    }
    expect((await row('hstk', 'string')).lastError).toEqual({ name: 'Error', message: 'a plain string' });
    // A retry that then succeeded: the row keeps the failed attempt's error, with its stack.
    const once = await row('ohstk', 'once');
    expect(once.status).toBe('done');
    expect(once.lastError?.stack).toMatch(/^RangeError: stack test failure of once\n {4}at failInStackTestHandler /);
  });
});
