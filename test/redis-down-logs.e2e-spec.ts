/**
 * Quiet outages (issue 26, item 4): per connection one warning when it is lost and one line when it is back;
 * the library's own calls that fail meanwhile are counted into those lines, not logged one by one; nothing
 * at DEBUG while Redis is away.
 *
 * Failure matrix (a redis-server of this file's own; an application with delay and ordered workers,
 * fleet event listeners, metrics and a schedule, so that every periodic caller runs: fetches, lease
 * renewals, heartbeats, rebalances, event-stream reads, metric reads, cron ticks):
 * | Redis is…                                | lines expected                                             |
 * | killed for 8 s, then restarted            | per connection: 1 warn "failed", 1 log "reconnected … N call(s) failed meanwhile"; no other warn or error of the library's own calls; no debug |
 * | paused (SIGSTOP) 8 s, then resumed        | the commands connection: 1 warn, 1 "reconnected"; no other warn, error or debug |
 * | black-holed 8 s by a proxy (every byte dropped, nothing closed), then healed | per connection that noticed: 1 warn, 1 "reconnected"; no other warn, error or debug |
 * | paused while a task fails: its failure cannot be recorded | counted in the outage's lines, not a warning of its own (CI saw a cron tick's) |
 * | paused while a handler's call fails (its error is the outage), recorded as Redis answers again | counted, not a warning of its own |
 * | the same in an ordered handler (its attempt retried in place)          | counted, not a warning of its own |
 */
import 'reflect-metadata';
import { Injectable, Logger } from '@nestjs/common';
import { Registry } from 'prom-client';
import { DistributedCron, OnTaskEvent, type TaskEvent } from 'nestjs-distributed-queue';
import { startQueueApp, workerClass, type QueueApp } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { startTcpProxy } from './support/tcp-proxy';
import { CapturingLogger } from './support/capturing-logger';
import { uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

let heard = 0;
/** What the `quiet.pausing` worker does (a test sets it). */
let pausing: ((task: { attempt: number }) => Promise<void>) | undefined;
@Injectable()
class Listeners {
  @OnTaskEvent('quiet.delay', 'completed', { scope: 'fleet' })
  onCompleted(_event: TaskEvent): void {
    heard++;
  }

  @DistributedCron('* * * * * *', { name: 'quiet-cron' })
  tick(): void {}
}

describe('a Redis outage is logged once per connection, quietly', () => {
  let server: RedisServerHandle;
  let app: QueueApp | undefined;
  beforeAll(async () => {
    server = await startRedisServer({ extraArgs: ['--save', ''] });
  });
  afterEach(async () => {
    if (server.isRunning()) server.kill('SIGCONT');
    else await server.restart();
    await app?.close();
    app = undefined;
    Logger.overrideLogger(['error']);
  });
  afterAll(() => server.remove());

  async function start(connection = server.url): Promise<{ logger: CapturingLogger; prefix: string }> {
    const prefix = uniquePrefix('quiet');
    // NOTE: counted from 0 by each test: with the count of an earlier test the first task could still be
    // running (its ack then refused after the pause, a debug line about the task, not the outage).
    heard = 0;
    pausing = undefined;
    app = await startQueueApp(
      {
        connection, keyPrefix: prefix, redisTimeoutMs: 1000, metrics: { prefix: `q${prefix.replace(/\W/g, '')}_`, registry: new Registry() },
        route: routeTestOptions(prefix, 'solo', 2, 10_000, 200), defaults: { pollIntervalMs: 100, visibilityTimeoutMs: 1000 },
        events: { stream: true },
      },
      [workerClass('quiet.delay', {}, () => undefined), workerClass('quiet.ordered', { ordered: true }, () => undefined),
        workerClass('quiet.pausing', { maxAttempts: 5, backoff: { type: 'fixed', delayMs: 100 } }, (task) => pausing?.(task)),
        workerClass('quiet.pausing-ordered', { ordered: true, maxAttempts: 5, backoff: { type: 'fixed', delayMs: 100 } }, (task) => pausing?.(task)), Listeners],
    );
    await app.submit.submit('quiet.delay', {});
    await app.submit.submitOrdered('quiet.ordered', 'k', {});
    await waitFor(() => heard > 0, { timeoutMs: 10_000, message: 'the fleet listener hears a completion' });
    const logger = new CapturingLogger();
    Logger.overrideLogger(logger);
    return { logger, prefix };
  }

  function expectQuiet(logger: CapturingLogger, prefix: string, connections: string[]): void {
    const mine = (message: string) => message.includes(`dq:${prefix}:`);
    const failed = logger.lines('warn', /^Redis connection \S+ failed/).filter(mine);
    const back = logger.lines('log', /^Redis connection \S+ reconnected/).filter(mine);
    const name = (line: string) => /^Redis connection (\S+)/.exec(line)![1];
    expect(failed.map(name).sort()).toEqual(connections.map((c) => `dq:${prefix}:${c}`).sort());
    expect(back.map(name).sort()).toEqual(connections.map((c) => `dq:${prefix}:${c}`).sort());
    // Everything else the library warned or errored about meanwhile (none of it should be about Redis).
    // NOTE: this server has no persistence: a restart loses the data, and the repair of the route queue's
    // and cron schedules is reported, once each (redis-lost-data tests it): about the data lost, not the outage.
    const repair = /(^Route queue ".*": its records|^Distributed cron: .*) were gone from Redis/;
    const others = [...logger.lines('warn'), ...logger.lines('error')].filter((m) => !/^Redis connection /.test(m) && !repair.test(m));
    expect(others).toEqual([]);
    const repairs = logger.lines('warn', repair);
    expect(new Set(repairs).size).toBe(repairs.length);
    // NOTE: an ack in flight when the server died (a task of this test's types, or the cron's own schedule ticks
    // on a slow machine) is refused after the restart, its reservation gone with the data: a debug line about
    // that task, not the outage (a full suite on a loaded machine saw "[schedule ticks] 1 ack(s) refused").
    expect(logger.lines('debug').filter((line) => !/^\[[^\]]+\] \d+ ack\(s\) refused: reservation expired$/.test(line))).toEqual([]);
    // The calls that failed meanwhile are counted in the line that says the connection is back.
    expect(back.some((line) => /\d+ call\(s\) of the library failed meanwhile/.test(line))).toBe(true);
  }

  it('killed for 8 s: one warning and one line back per connection, the failed calls counted, no debug', async () => {
    const { logger, prefix } = await start();
    server.kill('SIGKILL');
    await waitFor(() => !server.isRunning(), { timeoutMs: 5000 });
    await sleep(8000);
    await server.restart();
    await waitFor(() => logger.lines('log', /reconnected/).length >= 3, { timeoutMs: 15_000, message: 'every connection back' });
    const before = heard;
    await app!.submit.submit('quiet.delay', {});
    await waitFor(() => heard > before, { timeoutMs: 10_000, message: 'the fleet listener hears again' });
    expectQuiet(logger, prefix, ['commands', 'subscriber', 'streams']);
  }, 60_000);

  it('paused for 8 s: one warning and one line back for the commands connection, no debug', async () => {
    const { logger, prefix } = await start();
    server.kill('SIGSTOP');
    await sleep(8000);
    server.kill('SIGCONT');
    await waitFor(() => logger.lines('log', /reconnected/).filter((l) => l.includes(`dq:${prefix}:commands`)).length === 1, {
      timeoutMs: 15_000, message: 'the commands connection back',
    });
    // Every connection that said it was lost says it is back (each reconnects on its own schedule).
    const named = (level: string, pattern: RegExp) => logger.lines(level, pattern).filter((l) => l.includes(`dq:${prefix}:`)).map((l) => /^Redis connection (\S+)/.exec(l)![1]);
    await waitFor(() => named('warn', /^Redis connection \S+ failed/).every((c) => named('log', /^Redis connection \S+ reconnected/).includes(c)), {
      timeoutMs: 15_000, message: 'every lost connection back',
    });
    const lost = named('warn', /^Redis connection \S+ failed/).map((c) => c.split(':').pop()!);
    expectQuiet(logger, prefix, lost.length ? lost : ['commands']);
  }, 60_000);

  it('black-holed for 8 s (a proxy drops every byte, closes nothing), then healed: one warning and one line back per connection that noticed', async () => {
    const proxy = await startTcpProxy({ port: server.port });
    try {
      const { logger, prefix } = await start(`redis://${proxy.host}:${proxy.port}`);
      proxy.stall(true);
      await sleep(8000);
      // NOTE: the bytes dropped meanwhile leave the open connections out of step: a healed network's TCP
      // would have sent them again; the proxy cannot, so it closes them as it heals
      proxy.stall(false);
      proxy.cut();
      await expectQuietAfterPause(logger, prefix);
      const before = heard;
      await app!.submit.submit('quiet.delay', {});
      await waitFor(() => heard > before, { timeoutMs: 10_000, message: 'the fleet listener hears again' });
    } finally {
      await app?.close();
      app = undefined;
      await proxy.close();
    }
  }, 60_000);

  /** Waits until every connection that said it was lost says it is back, then checks the lines. */
  async function expectQuietAfterPause(logger: CapturingLogger, prefix: string): Promise<void> {
    const named = (level: string, pattern: RegExp) => logger.lines(level, pattern).filter((l) => l.includes(`dq:${prefix}:`)).map((l) => /^Redis connection (\S+)/.exec(l)![1]);
    await waitFor(() => named('warn', /^Redis connection \S+ failed/).length > 0 && named('warn', /^Redis connection \S+ failed/).every((c) => named('log', /^Redis connection \S+ reconnected/).includes(c)), {
      timeoutMs: 15_000, message: 'every lost connection back',
    });
    expectQuiet(logger, prefix, named('warn', /^Redis connection \S+ failed/).map((c) => c.split(':').pop()!));
  }

  it('paused while a task fails: the failure it cannot record is counted in the outage, not warned of', async () => {
    const { logger, prefix } = await start();
    let ran = false;
    pausing = async (task) => {
      if (task.attempt > 1) return void (ran = true);
      server.kill('SIGSTOP');
      setTimeout(() => server.kill('SIGCONT'), 4000);
      throw new Error('failed while Redis is paused');
    };
    await app!.submit.submit('quiet.pausing', {});
    // Its lease expires (the failure was not recorded) and it runs again.
    await waitFor(() => ran, { timeoutMs: 20_000, message: 'the task runs again' });
    await expectQuietAfterPause(logger, prefix);
  }, 60_000);

  it.each(['delay', 'ordered'] as const)("paused while the handler of a %s task has a call fail: its attempt (the outage's error), retried once Redis answers, is counted", async (kind) => {
    const { logger, prefix } = await start();
    let ran = false;
    pausing = async (task) => {
      if (task.attempt > 1) return void (ran = true);
      server.kill('SIGSTOP');
      try {
        await app!.submit.submit('quiet.delay', {});
      } catch (error) {
        // NOTE: the library's own calls (fetches) time out meanwhile too: the connection is known down
        await sleep(1500);
        server.kill('SIGCONT');
        throw error;
      }
    };
    if (kind === 'delay') await app!.submit.submit('quiet.pausing', {});
    else await app!.submit.submitOrdered('quiet.pausing-ordered', 'k', {});
    await waitFor(() => ran, { timeoutMs: 20_000, message: 'the task runs again' });
    await expectQuietAfterPause(logger, prefix);
  }, 60_000);
});
