import { Logger } from '@nestjs/common';
import { HistoryFlushTimeoutError, InvalidArgumentError, TaskHistoryService } from 'nestjs-distributed-queue';
import { PG_TARGET, PG_URL, useSchemaNames } from './support/pg';
import { keysOf, useQueueApps, workerClass, type QueueApp } from './support/queue-app';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

/*
 * flush() from any instance, and PostgreSQL that stops answering.
 * Failure matrix: server paused/black-holed (the proxy accepts and forwards nothing: no RST, no answer) for
 * the writer holding the lease and for a reader; flush() on an instance without the lease (the leader
 * copies, held-back tasks included; bounded, typed error when it cannot); bad input (flush's timeout).
 * Both targets: the lease and flush-request keys sit beside each stream, on its master.
 */

const historyOf = (app: QueueApp): TaskHistoryService => app.app.get(TaskHistoryService);

const proxied = (proxy: TcpProxy, extra: Record<string, unknown> = {}) => ({
  host: proxy.host, port: proxy.port, user: 'postgres', database: 'test', ...extra,
});

describe.each(getTargets().map((t) => [t.name, t] as const))('history: flush and a silent PostgreSQL on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  const newSchema = useSchemaNames();
  const proxies: TcpProxy[] = [];
  const newProxy = async (): Promise<TcpProxy> => {
    const proxy = await startTcpProxy(PG_TARGET, undefined, { raw: true });
    proxies.push(proxy);
    return proxy;
  };
  afterEach(async () => {
    jest.restoreAllMocks();
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });

  /** Starts the instance that holds the stream's lease (a worker of `type`), then one without it. */
  async function twoInstances(type: string, leaderHistory: Record<string, unknown>, otherHistory: Record<string, unknown>) {
    const keyPrefix = uniquePrefix('hist-flush');
    const Worker = workerClass(type, {}, () => undefined);
    const leader = await start({ connection: target.connection, keyPrefix, shutdownTimeoutMs: 1000, history: leaderHistory as never }, [Worker]);
    const lease = `${keysOf(keyPrefix, type).log}:writer`;
    await waitFor(async () => (await redis().get(lease)) !== null, { message: 'the first instance holds the lease' });
    const other = await start({ connection: target.connection, keyPrefix, workers: false, types: { [type]: {} }, history: otherHistory as never });
    return { leader, other };
  }

  it('flush() on an instance without the lease: the leader copies what waits now, held-back tasks included; resolves once it is in PostgreSQL', async () => {
    const schema = newSchema();
    const history = { connection: PG_URL, schema, flushIntervalMs: 50, coalesceMs: 600_000 };
    const { other } = await twoInstances('fl', history, history);
    await other.submit.submit('fl', { n: 1 }, { id: 'held', delay: 600_000 });
    await historyOf(other).flush();
    expect(await historyOf(other).getHistory('fl', 'held')).toMatchObject({ status: 'waiting', payload: { n: 1 } });
    // Again, with more waiting than one batch.
    await other.submit.submitMany('fl', Array.from({ length: 30 }, (_, i) => ({ id: `more-${i}`, payload: i, delay: 600_000 })));
    await historyOf(other).flush();
    const page = await historyOf(other).searchHistory({ type: 'fl', limit: 100 });
    expect(page.rows).toHaveLength(31);
  });

  it('flush() when the leader cannot write (its PostgreSQL black-holed): rejects with HistoryFlushTimeoutError after its timeout', async () => {
    const schema = newSchema();
    const proxy = await newProxy();
    const { other } = await twoInstances(
      'fs',
      { connection: proxied(proxy), schema, flushIntervalMs: 50, coalesceMs: 600_000, queryTimeoutMs: 30_000 },
      { connection: PG_URL, schema, flushIntervalMs: 50 },
    );
    proxy.stall(true);
    await other.submit.submit('fs', { n: 1 }, { id: 'stuck', delay: 600_000 });
    const t0 = performance.now();
    await expect(historyOf(other).flush({ timeoutMs: 1500 })).rejects.toBeInstanceOf(HistoryFlushTimeoutError);
    const took = performance.now() - t0;
    expect(took).toBeGreaterThanOrEqual(1400);
    expect(took).toBeLessThan(6000);
    await expect(historyOf(other).flush({ timeoutMs: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    proxy.cut();
  });

  it('PostgreSQL black-holed: every history query fails after queryTimeoutMs, not pg default 60 s', async () => {
    const schema = newSchema();
    const proxy = await newProxy();
    const Worker = workerClass('bq', {}, () => undefined);
    const app = await start(
      { connection: target.connection, keyPrefix: uniquePrefix('hist-bq'), shutdownTimeoutMs: 1000, history: { connection: proxied(proxy), schema, flushIntervalMs: 50, queryTimeoutMs: 1000 } },
      [Worker],
    );
    await app.submit.submit('bq', 1, { id: 'one' });
    await waitFor(async () => (await historyOf(app).getHistory('bq', 'one'))?.status === 'done', { message: 'copied while PostgreSQL answers' });
    proxy.stall(true);
    for (const query of [() => historyOf(app).getHistory('bq', 'one'), () => historyOf(app).searchHistory({ type: 'bq' })]) {
      const t0 = performance.now();
      await expect(query()).rejects.toThrow();
      // 1 s for the query; a new connection (the pool's may be busy) waits for the connect timeout (5 s).
      expect(performance.now() - t0).toBeLessThan(7000);
    }
    proxy.cut();
  });

  it('PostgreSQL black-holed: the backlog warning comes on its own timer while the writer waits for an answer', async () => {
    const schema = newSchema();
    const proxy = await newProxy();
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const Worker = workerClass('bw', {}, () => undefined);
    const app = await start(
      {
        connection: target.connection, keyPrefix: uniquePrefix('hist-bw'), shutdownTimeoutMs: 1000, events: { streamMaxLen: 100 },
        history: { connection: proxied(proxy), schema, flushIntervalMs: 50, coalesceMs: 0, queryTimeoutMs: 60_000 },
      },
      [Worker],
    );
    await app.submit.submit('bw', 0, { id: 'first' });
    await waitFor(async () => (await historyOf(app).getHistory('bw', 'first').catch(() => null))?.status === 'done', { message: 'copied while PostgreSQL answers' });
    proxy.stall(true);
    // One stream entry per submit call: past 80 of at most 100.
    for (let i = 0; i < 100; i++) await app.submit.submit('bw', i, { id: `t${i}`, delay: 600_000 });
    const t0 = performance.now();
    await waitFor(() => warn.mock.calls.some(([message]) => /holds \d+ of at most 100 entries not yet copied/.test(String(message))), {
      timeoutMs: 15_000,
      message: 'the backlog warning (the writer waits up to 60 s for its query)',
    });
    expect(performance.now() - t0).toBeLessThan(15_000);
    proxy.cut();
  });
});
