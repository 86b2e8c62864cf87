import 'reflect-metadata';
import { Logger, LoggerService, Type } from '@nestjs/common';
import { QueueInUseError, TaskScheduleService, type DistributedQueueModuleOptions, type Task } from 'nestjs-distributed-queue';
import { loadScripts } from 'nestjs-distributed-queue/redis/script-loader';
import { startQueueApp, workerClass, type QueueApp } from './support/queue-app';
import { redisCommand, startRedisServer, type RedisServerHandle } from './support/redis-server';
import { getTargets, uniquePrefix } from './support/targets';
import { useAclUser } from './support/acl-user';
import { hasOpenssl, libraryAclRule, startTlsRedisServer, type TlsRedisServer } from './support/tls';
import { sleep, waitFor } from './support/wait';

/** Keeps what the application logs (levels, messages, contexts). */
class CapturingLogger implements LoggerService {
  readonly entries: { level: string; message: string; context?: string }[] = [];
  private add(level: string, message: unknown, params: unknown[]): void {
    const context = typeof params[params.length - 1] === 'string' ? (params[params.length - 1] as string) : undefined;
    this.entries.push({ level, message: message instanceof Error ? message.message : String(message), context });
  }
  log(message: unknown, ...params: unknown[]): void {
    this.add('log', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.add('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.add('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.add('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.add('verbose', message, params);
  }
  /** Messages of `level` matching `pattern`, counted by their first capture group. */
  countBy(level: string, pattern: RegExp): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const e of this.entries) {
      const m = e.level === level ? pattern.exec(e.message) : null;
      if (m) counts[m[1]] = (counts[m[1]] ?? 0) + 1;
    }
    return counts;
  }
}

/**
 * startQueueApp, then every later log line goes to `logger`: the library's `Logger`s forward to the static
 * logger at each call. (What start-up logged went to startQueueApp's console logger.)
 */
async function startApp(options: DistributedQueueModuleOptions, workers: Type<unknown>[], logger: LoggerService): Promise<QueueApp> {
  const app = await startQueueApp(options, workers);
  Logger.overrideLogger(logger);
  return app;
}

const route = (qId: string) => ({ qId, partitions: 2, heartbeatMs: 200, offlineMs: 10_000, idleMs: 20_000, rebalanceMs: 300 });

/** A delay worker and an ordered worker that record what ran. */
function recordingWorkers(prefix: string, ran: string[] = []): { workers: Type<unknown>[]; ran: string[] } {
  return {
    ran,
    workers: [
      workerClass(`${prefix}.task`, { pollIntervalMs: 200 }, (task: Task) => void ran.push(task.id)),
      workerClass(`${prefix}.ordered`, { ordered: true }, (task: Task<{ n: number }>) => void ran.push(`${task.id}:${task.payload.n}`)),
    ],
  };
}

/** Submits a delay task and two ordered ones and waits until all three ran, the ordered ones in order, once. */
async function runBothEngines(app: QueueApp, prefix: string, ran: string[], label: string): Promise<void> {
  const id = await app.submit.submit(`${prefix}.task`, { label }, { id: `${label}-delay` });
  await app.submit.submitOrderedMany(`${prefix}.ordered`, [1, 2].map((n) => ({ key: label, id: `${label}-o${n}`, payload: { n } })));
  await waitFor(() => [id, `${label}-o1:1`, `${label}-o2:2`].every((r) => ran.includes(r)), { timeoutMs: 10_000, message: `${label} ran` });
  expect(ran.filter((r) => r.startsWith(`${label}-o`))).toEqual([`${label}-o1:1`, `${label}-o2:2`]);
}

describe('connection errors', () => {
  let server: RedisServerHandle | undefined;
  let app: QueueApp | undefined;
  const restore: (() => void)[] = [];
  afterEach(async () => {
    restore.splice(0).forEach((undo) => undo());
    // NOTE: an application closes faster with its Redis back (its last commands would wait for it).
    if (server && !server.isRunning()) await server.restart();
    await app?.close();
    await server?.remove();
    jest.restoreAllMocks();
  });

  it('logs one warning per connection and outage, never an unhandled error event, and recovers', async () => {
    server = await startRedisServer({ appendonly: true });
    const logger = new CapturingLogger();
    // NOTE: Node's socket errors come from outside Jest's sandbox, so ioredis's `error instanceof Error`
    // is false here and it would not print "Unhandled error event" as it does in an application.
    const hasInstance = Object.getOwnPropertyDescriptor(Error, Symbol.hasInstance);
    Object.defineProperty(Error, Symbol.hasInstance, {
      configurable: true,
      value: (value: unknown) => Object.prototype.toString.call(value) === '[object Error]',
    });
    restore.push(() => {
      if (hasInstance) Object.defineProperty(Error, Symbol.hasInstance, hasInstance);
      else delete (Error as unknown as Record<symbol, unknown>)[Symbol.hasInstance];
    });
    const consoleError = jest.spyOn(console, 'error');
    const stderr = jest.spyOn(process.stderr, 'write');
    const { workers, ran } = recordingWorkers('conn');
    const keyPrefix = uniquePrefix('conn');
    app = await startApp({ connection: server.url, keyPrefix, route: route('conn') }, workers, logger);
    await runBothEngines(app, 'conn', ran, 'before');
    const clients = (await redisCommand(server.port, ['CLIENT', 'LIST'])) ?? '';
    const names = [...new Set([...clients.matchAll(/ name=(\S+)/g)].map((m) => m[1]).filter((n) => n.startsWith(`dq:${keyPrefix}:`)))];
    expect(names).toContain(`dq:${keyPrefix}:commands`);
    expect(names).toContain(`dq:${keyPrefix}:subscriber`);

    server.kill('SIGKILL');
    await waitFor(() => !server!.isRunning(), { timeoutMs: 5000 });
    await sleep(2000); // ioredis retries every 50..2000 ms: several failed reconnects per connection

    const once = Object.fromEntries(names.map((n) => [n, 1]));
    const printed = [...consoleError.mock.calls, ...stderr.mock.calls].map((args) => args.map(String).join(' ').slice(0, 200));
    expect(printed.filter((line) => line.includes('Unhandled error event'))).toEqual([]);
    expect(logger.countBy('warn', /^Redis connection (\S+) failed/)).toEqual(once);
    expect(logger.entries.filter((e) => /^Redis connection/.test(e.message)).every((e) => e.context === 'DistributedQueue')).toBe(true);

    await server.restart();
    await waitFor(() => Object.keys(logger.countBy('log', /^Redis connection (\S+) reconnected/)).length === names.length, {
      timeoutMs: 10_000,
      message: 'every connection reconnected',
    });
    await runBothEngines(app, 'conn', ran, 'after');
    expect(logger.countBy('log', /^Redis connection (\S+) reconnected/)).toEqual(once);
    expect(logger.countBy('warn', /^Redis connection (\S+) failed/)).toEqual(once);
  });
});

(hasOpenssl() ? describe : describe.skip)('TLS', () => {
  let server: TlsRedisServer | undefined;
  afterAll(() => server?.stop());

  it('runs delay and ordered tasks over TLS ({ host, port, tls: { ca } }) with a private CA', async () => {
    server = await startTlsRedisServer();
    const logger = new CapturingLogger();
    const { workers, ran } = recordingWorkers('tls');
    const connection = { host: '127.0.0.1', port: server.port, tls: { ca: server.certificates.ca } };
    const app = await startApp({ connection, keyPrefix: uniquePrefix('tls'), route: route('tls') }, workers, logger);
    try {
      await runBothEngines(app, 'tls', ran, 'tls');
      expect(logger.entries.filter((e) => e.level === 'warn' || e.level === 'error')).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

describe.each(getTargets().map((t) => [t.name, t] as const))('least-privilege ACL user on %s', (_name, target) => {
  const acl = useAclUser(target, 'dq');

  it('runs both engines (submit, retry to dead, redrive, cancel, ordered, status) with no NOPERM', async () => {
    const keyPrefix = uniquePrefix('acl');
    const rule = libraryAclRule(keyPrefix);
    expect(rule).not.toMatch(/\+@all|~\*|&\*|allkeys|allchannels/);
    // ACL checks the commands the scripts call: each one the Lua sources name must be in the rule.
    const called = new Set(loadScripts().flatMap((s) => [...s.lua.matchAll(/redis\.p?call\(\s*'(\w+)'/g)].map((m) => m[1].toLowerCase())));
    expect([...called].filter((command) => !rule.split(' ').includes(`+${command}`))).toEqual([]);
    const connection = await acl.apply(rule);
    const logger = new CapturingLogger();
    const { workers, ran } = recordingWorkers('acl');
    let failing = true;
    workers.push(
      workerClass('acl.flaky', { maxAttempts: 2, backoff: { type: 'fixed', delayMs: 10 } }, (task: Task) => {
        ran.push(`flaky:${task.id}:${task.attempt}`);
        if (failing) throw new Error('fails until re-driven');
      }),
    );
    const app = await startApp({ connection, keyPrefix, route: route('acl'), schedules: true }, workers, logger);
    try {
      await runBothEngines(app, 'acl', ran, 'acl');
      // Distributed cron: a schedule set, ticked and removed as that user.
      const schedules = app.app.get(TaskScheduleService);
      await schedules.upsert('acl-every', { everyMs: 1000, type: 'acl.task' });
      await waitFor(() => ran.some((id) => id.startsWith('acl-every@')), { timeoutMs: 5000, message: 'a tick ran' });
      expect(await schedules.remove('acl-every')).toBe(true);
      await app.submit.submit('acl.flaky', {}, { id: 'f1' });
      await waitFor(async () => (await app.inspect.getState('acl.flaky', 'f1')) === 'dead', { timeoutMs: 5000 });
      expect((await app.inspect.listDead('acl.flaky')).total).toBe(1);
      failing = false;
      expect(await app.inspect.redriveDead('acl.flaky', [], 10)).toBe(1);
      await waitFor(async () => (await app.inspect.getState('acl.flaky', 'f1')) === 'done', { timeoutMs: 5000 });
      await app.submit.submit('acl.task', {}, { id: 'later', delay: 60_000 });
      expect(await app.submit.reschedule('acl.task', 'later', { delay: 30_000 })).toBe(true);
      expect((await app.inspect.getTask('acl.task', 'later')).state).toBe('delayed');
      expect(await app.submit.cancel('acl.task', 'later')).toBe('cancelled');
      // Awaiting (its flag and channel), a deduplicated submit, a deadline.
      await app.submit.submitAndWait('acl.task', {}, { id: 'awaited', timeoutMs: 5000 });
      const [first, again] = await app.submit.submitMany('acl.task', [
        { payload: {}, delay: 60_000, dedupe: { key: 'd', mode: 'debounce' } },
        { payload: {}, delay: 60_000, dedupe: { key: 'd', mode: 'debounce' }, ttlMs: 120_000 },
      ]);
      expect(again).toEqual({ id: first.id, created: false, dedupe: 'debounced' });
      await app.submit.submitOrdered('acl.ordered', 'k', { n: 3 }, { id: 'late', delay: 100 });
      await waitFor(() => ran.includes('late:3'), { timeoutMs: 5000 });
      const status = await app.inspect.getRouteStatus();
      expect(status.partitions.every((p) => p.owner)).toBe(true);
      expect(await app.inspect.listOrderedDead()).toEqual([]);
      expect(await app.inspect.redriveOrderedDead()).toBe(0);
      // Operations: pause of the route queue, ordered listings, cleaning (presence is touched by every consumer).
      await app.control.pause('acl.ordered');
      expect(await app.control.isPaused('acl.ordered')).toBe(true);
      await app.control.resume('acl.ordered');
      for (const state of ['ready', 'running', 'dead', 'delayed'] as const) await app.inspect.listTasks('acl.ordered', state);
      expect(await app.control.drain('acl.ordered')).toBe(0);
      expect(await app.control.purgeDead('acl.ordered')).toBe(0);
      expect(await app.control.drain('acl.task')).toBe(1); // the debounced task, waiting 60 s
      expect(await app.control.purgeDead('acl.flaky', { olderThanMs: 60_000 })).toBe(0);
      await expect(app.control.obliterate('acl.flaky')).rejects.toThrow(QueueInUseError);
      await app.control.obliterate('acl.flaky', { force: true });
      // Growing the partition count (resize barriers and gates) as that user too.
      const grown = recordingWorkers('acl', ran);
      const second = await startApp({ connection, keyPrefix, route: { ...route('acl'), partitions: 3 } }, grown.workers, logger);
      try {
        await runBothEngines(second, 'acl', ran, 'grown');
      } finally {
        await second.close();
      }
      await sleep(300); // heartbeats, rebalances and polls as well
    } finally {
      await app.close();
    }
    expect((await acl.denied()).map((entry) => Object.fromEntries(chunks(entry)))).toEqual([]);
    expect(logger.entries.filter((e) => /NOPERM/.test(e.message))).toEqual([]);
  });
});

function chunks(flat: unknown[]): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([String(flat[i]), flat[i + 1]]);
  return out;
}
