/**
 * A PostgreSQL outage that lasts past the event stream's cap.
 *
 * Failure matrix cell (docs/failure-matrix.md, section 3, "Largest: backlog beyond `events.streamMaxLen`
 * during a long outage"): with `events.streamMaxLen: 100` and PostgreSQL refusing connections (a proxy that
 * is down), 400 submits (one stream entry each): the backlog warning comes; once PostgreSQL is back, the rows
 * that are missing are the oldest submits' only (a prefix: those entries were dropped by the cap), at least
 * the last 100 are written, each once, and rows written before the outage stay.
 */
import { Logger } from '@nestjs/common';
import { TaskHistoryService } from 'nestjs-distributed-queue';
import { PG_TARGET, tableRows, useSchemaNames } from './support/pg';
import { useStartedApps, workerClass } from './support/queue-app';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const target = getTargets()[0];

describe('history: an outage longer than the stream cap', () => {
  const start = useStartedApps();
  const newSchema = useSchemaNames();
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    jest.restoreAllMocks();
    await proxy?.close();
    proxy = undefined;
  });

  it('past events.streamMaxLen: warned, then only the oldest rows are missing; the last ones are written once', async () => {
    const schema = newSchema();
    proxy = await startTcpProxy(PG_TARGET, undefined, { raw: true });
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const app = await start(
      {
        connection: target.connection, keyPrefix: uniquePrefix('hist-cap'), shutdownTimeoutMs: 1000, events: { streamMaxLen: 100 },
        history: { connection: { host: proxy.host, port: proxy.port, user: 'postgres', database: 'test' }, schema, flushIntervalMs: 50, coalesceMs: 0, queryTimeoutMs: 1000 },
      },
      [workerClass('cap', {}, () => undefined)],
    );
    const history = app.app.get(TaskHistoryService);
    await app.submit.submit('cap', 'first', { id: 'first' });
    await waitFor(async () => (await history.getHistory('cap', 'first'))?.status === 'done', { message: 'the row written before the outage' });

    proxy.down(true);
    const ids = Array.from({ length: 400 }, (_, i) => `d${String(i).padStart(3, '0')}`);
    for (const id of ids) await app.submit.submit('cap', id, { id, delay: 600_000 });
    await waitFor(() => warn.mock.calls.some(([m]) => /holds \d+ of at most 100 entries not yet copied; past that the oldest are dropped/.test(String(m))), {
      timeoutMs: 10_000, message: 'the backlog warning',
    });

    proxy.down(false);
    const rows = await waitFor(async () => {
      const found = await tableRows(schema);
      return found.some((r) => r.id === ids[ids.length - 1]) ? found : null;
    }, { timeoutMs: 30_000, intervalMs: 200, message: 'the last submit written once PostgreSQL is back' });

    expect(rows.find((r) => r.id === 'first')?.status).toBe('done');
    const written = rows.filter((r) => r.id !== 'first').map((r) => r.id as string).sort();
    expect(written.every((id) => ids.includes(id))).toBe(true);
    // A suffix of the submits: what the cap dropped is the oldest, and nothing after it is missing.
    const firstKept = ids.indexOf(written[0]);
    expect(firstKept).toBeGreaterThan(0);
    expect(written).toEqual(ids.slice(firstKept));
    expect(written.length).toBeGreaterThanOrEqual(100);
    expect(rows.filter((r) => r.id !== 'first' && r.status !== 'waiting')).toEqual([]);
  }, 60_000);
});
