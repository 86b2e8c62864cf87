import type { HistoryEvent } from 'nestjs-distributed-queue/history';
import { withTimeout } from 'nestjs-distributed-queue/runtime/with-timeout';
import { lifeEvents, PG_TARGET, tableRows, useHistoryStores } from './support/pg';
import { startTcpProxy, TcpProxy } from './support/tcp-proxy';
import { sleep } from './support/wait';

const openStore = useHistoryStores();

function chunks<T>(items: T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
}

const lastEntry = (batch: HistoryEvent[]): string => batch[batch.length - 1].entryId;

describe('PgHistoryStore: a PostgreSQL outage', () => {
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  it('apply fails while the server is unreachable; retrying the same batches loses nothing and doubles nothing', async () => {
    const batches = chunks(lifeEvents(200), 25);
    const reference = await openStore();
    for (const batch of batches) await reference.apply('s', batch, lastEntry(batch));

    proxy = await startTcpProxy(PG_TARGET, undefined, { raw: true });
    const port = proxy.port;
    const store = await openStore(undefined, {
      connection: { host: proxy.host, port, user: 'postgres', database: 'test', connectionTimeoutMillis: 1000, query_timeout: 5000 },
    });
    const failures: string[] = [];
    let outage: Promise<void> | undefined;
    const deadline = Date.now() + 30_000;
    for (const [i, batch] of batches.entries()) {
      if (i === 5) {
        // Down for a second (every connection destroyed, connects refused), then back on the same port.
        outage = (async () => {
          await proxy!.close();
          await sleep(1000);
          proxy = await startTcpProxy(PG_TARGET, undefined, { raw: true, port });
        })();
      }
      // Later batches: connections cut while a batch is in flight (its commit may or may not have landed).
      const cutter = i >= 20 && i < 30 ? setTimeout(() => proxy?.cut(), i % 4) : undefined;
      for (;;) {
        try {
          await store.apply('s', batch, lastEntry(batch));
          break;
        } catch (error) {
          failures.push((error as Error).message);
          if (Date.now() > deadline) throw error;
          await sleep(50);
        }
      }
      clearTimeout(cutter);
      await sleep(10);
    }
    await withTimeout(outage!, 10_000, 'the proxy is back');

    expect(failures.filter((m) => /ECONNREFUSED/.test(m)).length).toBeGreaterThan(3);
    expect(await tableRows(store.names.schema!)).toEqual(await tableRows(reference.names.schema!));
    expect(await store.position('s')).toBe(lastEntry(batches[batches.length - 1]));
  });
});
