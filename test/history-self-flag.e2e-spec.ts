/**
 * The history writer asks the scripts to log what it needs (its recorded flag) but is no fleet-event
 * follower itself: it must not take its own flag for a follower's.
 *
 * - Alone on a stream (no fleet listener): once copied, the entries are trimmed away (none are kept for a
 *   follower that does not exist), the stream's followed flag is not raised, the backlog (`backlog()`, the
 *   metrics gauge) is 0, and no warning says that copied entries are "not yet copied".
 * - With a real fleet listener: the copied entries stay in the stream for it (its flag is up), but the
 *   backlog counts only the entries after the recorded position: 0 once copied; then, PostgreSQL unreachable
 *   (a proxy that is down), only the entries submitted meanwhile; no warning.
 *
 * `events.streamMaxLen: 100` (warning at 80 entries) and 90 submits, one stream entry each, in groups of 10
 * with a flush after each group (so that at no time are 80 entries really waiting: any warning is a false
 * one); with the listener, the last 40 while PostgreSQL is unreachable.
 * Both targets.
 */
import { Injectable, Logger } from '@nestjs/common';
import { OnTaskEvent, TaskHistoryService, type TaskEvent } from 'nestjs-distributed-queue';
import { HistoryWriter } from 'nestjs-distributed-queue/history/history-writer';
import { PG_TARGET, PG_URL, useSchemaNames } from './support/pg';
import { keysOf, useQueueApps, type QueueApp } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';

/** A fleet listener of the type: it follows the stream (raises its followed flag). */
@Injectable()
class FleetListener {
  @OnTaskEvent('sf', '*', { scope: 'fleet' })
  on(_event: TaskEvent): void {}
}

const SUBMITS = 90;
const FALSE_WARNING = /holds \d+ of at most 100 entries not yet copied/;

describe.each(getTargets().map((t) => [t.name, t] as const))('history writer and its own flag on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  const newSchema = useSchemaNames();
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    jest.restoreAllMocks();
    await proxy?.close();
    proxy = undefined;
  });

  /**
   * Submits `from` .. `to` of type `sf` (one entry each), flushed every 10 (`flush`); then waits for two
   * backlog checks (every 1 s) at least.
   */
  async function submitAndCopy(app: QueueApp, from = 0, to = SUBMITS, flush = true): Promise<void> {
    const history = app.app.get(TaskHistoryService);
    for (let i = from; i < to; i++) {
      await app.submit.submit('sf', { i }, { id: `t${i}`, delay: 600_000 });
      if (flush && i % 10 === 9) await history.flush();
    }
    await new Promise((resolve) => setTimeout(resolve, 2500));
  }

  it('alone on its stream: the copied entries are trimmed, its followed flag is not raised, the backlog is 0 and nothing is warned', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const prefix = uniquePrefix('hist-self');
    const keys = keysOf(prefix, 'sf');
    const app = await start({
      connection: target.connection, keyPrefix: prefix, workers: false, types: { sf: {} }, events: { streamMaxLen: 100 },
      history: { connection: PG_URL, schema: newSchema(), flushIntervalMs: 50, coalesceMs: 0 },
    });
    await submitAndCopy(app);

    expect(warn.mock.calls.filter(([m]) => FALSE_WARNING.test(String(m)))).toEqual([]);
    expect(await app.app.get(HistoryWriter).backlog()).toEqual([{ stream: keys.log, entries: 0 }]);
    // Everything was copied and no one follows the stream: nothing is kept in it.
    expect(await redis().xlen(keys.log)).toBe(0);
    expect(await redis().exists(keys.recorded)).toBe(1);
    expect(await redis().exists(keys.followed)).toBe(0);
    expect((await app.app.get(TaskHistoryService).searchHistory({ type: 'sf', limit: 100 })).rows).toHaveLength(SUBMITS);
  }, 50_000);

  it('with a fleet listener: the copied entries stay for it, and the backlog counts only those after the position (then PostgreSQL down: only the new ones); nothing is warned', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const prefix = uniquePrefix('hist-self-fol');
    const keys = keysOf(prefix, 'sf');
    proxy = await startTcpProxy(PG_TARGET, undefined, { raw: true });
    const app = await start(
      {
        connection: target.connection, keyPrefix: prefix, workers: false, types: { sf: {} }, events: { streamMaxLen: 100, followIntervalMs: 1000 },
        shutdownTimeoutMs: 1000,
        history: { connection: { host: proxy.host, port: proxy.port, user: 'postgres', database: 'test' }, schema: newSchema(), flushIntervalMs: 50, coalesceMs: 0, queryTimeoutMs: 1000 },
      },
      [FleetListener],
    );
    const writer = app.app.get(HistoryWriter);
    await submitAndCopy(app, 0, 50);
    expect(await redis().exists(keys.followed)).toBe(1);
    // Kept for the listener: the writer trims only entries older than FOLLOWERS_KEEP_MS (30 s).
    expect(await redis().xlen(keys.log)).toBe(50);
    expect(await writer.backlog()).toEqual([{ stream: keys.log, entries: 0 }]);

    // PostgreSQL unreachable: 40 more entries wait; the 50 copied ones do not count.
    proxy.down(true);
    await submitAndCopy(app, 50, SUBMITS, false);
    expect(await redis().xlen(keys.log)).toBe(SUBMITS);
    expect(warn.mock.calls.filter(([m]) => FALSE_WARNING.test(String(m)))).toEqual([]);
    expect(await writer.backlog()).toEqual([{ stream: keys.log, entries: SUBMITS - 50 }]);
    expect(await writer.backlog()).toEqual([{ stream: keys.log, entries: SUBMITS - 50 }]);

    proxy.down(false);
    await app.app.get(TaskHistoryService).flush();
    expect(await writer.backlog()).toEqual([{ stream: keys.log, entries: 0 }]);
    expect((await app.app.get(TaskHistoryService).searchHistory({ type: 'sf', limit: 100 })).rows).toHaveLength(SUBMITS);
  }, 50_000);
});
