/**
 * The history's last way of writing a batch (a row at a time under savepoints, `PgHistoryStore.applyEach`:
 * the way of a batch holding a value PostgreSQL refuses even decoded) cut half-way.
 *
 * Failure matrix cells (docs/failure-matrix.md, section 3, "A value PostgreSQL refuses"):
 * | cell | event | expected |
 * | crash between savepoints | the writer (a child, crash hook DQ_DIE_AT_SAVEPOINT) SIGKILLed before its 4th savepoint, 3 rows upserted in the open transaction | rolled back: no row, no position; the next writer writes every row but the refused one, once, and records the position |
 * | PostgreSQL lost between savepoints | the connection cut (a proxy) before the 4th savepoint | the call rejects within its bound; no row, no position; the same batch again writes every row but the refused one, once, and the position |
 * The batch: 10 tasks submitted, started and completed, one of them at an attempt past PostgreSQL's int (its row is refused: left out, returned as skipped). Both Redis targets for the crash.
 */
import { EventStreams } from 'nestjs-distributed-queue/events/event-streams';
import type { StreamEntry } from 'nestjs-distributed-queue/events/stream-entry';
import { TaskHistoryService } from 'nestjs-distributed-queue';
import { withTimeout } from 'nestjs-distributed-queue/runtime/with-timeout';
import { killAllChildren, spawnChild } from './support/child';
import { PG_TARGET, PG_URL, pgQuery, tableRows, useHistoryStores, useSchemaNames } from './support/pg';
import { keysOf, useQueueApps } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';
import { waitFor } from './support/wait';

const IDS = Array.from({ length: 10 }, (_, i) => `t${i}`);
/** The refused task: started with an attempt count past PostgreSQL's int. */
const REFUSED = 't0';

/** The fields of the batch's three entries: every task submitted, started (t0 at attempt 3e9), completed. */
const FIELDS: string[][] = [
  ['e', 'submitted', 'ids', JSON.stringify(IDS), 'due', JSON.stringify(IDS.map(() => 10)), 'd', JSON.stringify(IDS.map(() => 0)), 'b', JSON.stringify(IDS.map(() => '{}'))],
  ['e', 'started', 'ids', JSON.stringify(IDS), 'a', JSON.stringify(IDS.map((id) => (id === REFUSED ? 3_000_000_000 : 1))), 's', JSON.stringify(IDS.map(() => 11)), 'm', 'host/1'],
  // NOTE: every task finished, so that the writer holds none back: the whole batch goes in one pass.
  ['e', 'completed', 'ids', JSON.stringify(IDS), 'a', JSON.stringify(IDS.map((id) => (id === REFUSED ? 3_000_000_000 : 1)))],
];

/** Every row but the refused one, done, written once. */
function expectWritten(rows: Record<string, unknown>[]): void {
  expect(rows.map((r) => [r.id, r.status, r.reentry])).toEqual(IDS.filter((id) => id !== REFUSED).map((id) => [id, 'done', 1]));
}

/** Waits until the backend of a killed or cut connection is gone (its transaction rolled back). */
async function noBackendBusy(): Promise<void> {
  await waitFor(async () => (await pgQuery<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'idle in transaction' AND query LIKE '%dq_row%' AND pid <> pg_backend_pid()`))[0].n === 0, {
    timeoutMs: 10_000, message: 'the dead connection\'s backend gone',
  });
}

describe.each(getTargets().map((t) => [t.name, t] as const))('history writer killed between the savepoints of a row-at-a-time batch, on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  const newSchema = useSchemaNames();
  afterEach(() => killAllChildren());

  it('SIGKILL before the 4th savepoint: nothing of the batch is left; the next writer writes every row but the refused one, once', async () => {
    const schema = newSchema();
    const prefix = uniquePrefix('hist-each');
    const type = 'each';
    const stream = keysOf(prefix, type).log;
    // An application of the type (no worker) makes the stream's keys known; the entries are written as
    // the scripts would log them.
    const app = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { [type]: {} } });
    const streams = app.app.get(EventStreams);
    await streams.raiseFlags(await streams.ofTypes([type]), 'outcomes');
    let last = '';
    for (const fields of FIELDS) last = (await redis().xadd(stream, '*', ...fields))!;

    const writer = spawnChild('test/support/history-writer-app.ts', {
      DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: type, DQ_DIE_AT_SAVEPOINT: '4',
      DQ_HISTORY: JSON.stringify({ connection: PG_URL, schema, flushIntervalMs: 200 }),
    });
    expect(await writer.waitForMessage((m) => m.type === 'savepoint', 30_000)).toMatchObject({ n: 4 });
    expect((await writer.exited).signal).toBe('SIGKILL');
    await noBackendBusy();
    expect(await tableRows(schema)).toEqual([]);
    expect(await pgQuery(`SELECT last_id FROM "${schema}".dq_task_history_positions WHERE stream = $1`, [stream])).toEqual([]);

    // The next writer. The stream's lease is the dead writer's until it expires: let it go now.
    await redis().del(`${stream}:writer`);
    const next = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { [type]: {} }, history: { connection: PG_URL, schema, flushIntervalMs: 50 } });
    await next.app.get(TaskHistoryService).flush({ timeoutMs: 20_000 });
    expectWritten(await tableRows(schema));
    expect(await pgQuery(`SELECT last_id FROM "${schema}".dq_task_history_positions WHERE stream = $1`, [stream])).toEqual([{ last_id: last }]);
  }, 90_000);
});

describe('history store: PostgreSQL lost between the savepoints of a row-at-a-time batch', () => {
  const openStore = useHistoryStores();
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  it('the call rejects within its bound, nothing is left; the same batch again writes every row but the refused one, once', async () => {
    proxy = await startTcpProxy(PG_TARGET, undefined, { raw: true });
    const store = await openStore(undefined, {
      connection: { host: proxy.host, port: proxy.port, user: 'postgres', database: 'test', connectionTimeoutMillis: 1000, query_timeout: 5000 },
    });
    const entries: StreamEntry[] = FIELDS.map((fields, i) => [`${10 + i}-0`, fields]);
    const batch = { stream: 's', entries: entries.map((entry) => ({ entry, only: '' })), position: '12-0', from: { type: 'each' }, logs: new Map<string, string>(), types: ['each'], timeoutOf: () => 1000 };

    // The store's own pg module: cut the connection as the 4th savepoint is sent.
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const { Client } = require('pg') as typeof import('pg');
    const query = Client.prototype.query as (...args: unknown[]) => unknown;
    let savepoints = 0;
    const spy = jest.spyOn(Client.prototype, 'query').mockImplementation(function (this: unknown, ...args: unknown[]) {
      if (args[0] === 'SAVEPOINT dq_row' && ++savepoints === 4) proxy!.cut();
      return query.apply(this, args);
    } as never);
    try {
      await expect(withTimeout(store.applyEntries(batch), 15_000, 'applyEntries')).rejects.toThrow();
    } finally {
      spy.mockRestore();
    }
    expect(savepoints).toBe(4);
    await noBackendBusy();
    expect(await tableRows(store.names.schema!)).toEqual([]);
    expect(await store.position('s')).toBeNull();

    const skipped = await store.applyEntries(batch);
    expect(skipped.map((s) => s.event.id)).toEqual([REFUSED]);
    expectWritten(await tableRows(store.names.schema!));
    expect(await store.position('s')).toBe('12-0');
  }, 60_000);
});
