import { TaskHistoryService, type Task } from 'nestjs-distributed-queue';
import { PG_TARGET, PG_URL, useSchemaNames } from './support/pg';
import { useStartedApps, workerClass } from './support/queue-app';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const target = getTargets()[0];

describe('closing an application whose history PostgreSQL stopped answering', () => {
  const start = useStartedApps();
  const newSchema = useSchemaNames();
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  it('close() does not wait for PostgreSQL; what the last copy did not write, the next writer copies', async () => {
    const schema = newSchema();
    const keyPrefix = uniquePrefix('hist-close');
    proxy = await startTcpProxy(PG_TARGET, undefined, { raw: true });
    const done: string[] = [];
    const Worker = workerClass('close', { concurrency: 20 }, (task: Task) => void done.push(task.id));
    const n = 200;
    // NOTE: a query that gets no answer fails after 20 s here (60 s by default): close() used to wait that
    // long for the writer's last copy, then as long again for the pool to end.
    const app = await start(
      {
        connection: target.connection, keyPrefix, shutdownTimeoutMs: 1000,
        history: { connection: { host: proxy.host, port: proxy.port, user: 'postgres', database: 'test', query_timeout: 20_000 }, schema, flushIntervalMs: 50 },
      },
      [Worker],
    );
    await app.submit.submitMany('close', Array.from({ length: n }, (_, i) => ({ id: `t${i}`, payload: i })));
    await waitFor(() => done.length === n, { timeoutMs: 10_000, message: 'every task ran' });
    // Tasks that end soon after their submit are held back to be written once, finished: the last copy has them.
    proxy.stall(true);
    const t0 = performance.now();
    await app.close();
    const closedIn = performance.now() - t0;
    expect(closedIn).toBeLessThan(5000);

    const reader = await start({ connection: target.connection, keyPrefix, workers: false, types: { close: {} }, history: { connection: PG_URL, schema, flushIntervalMs: 50 } });
    const history = reader.app.get(TaskHistoryService);
    await waitFor(async () => (await history.searchHistory({ type: 'close', status: 'done', limit: 1000 })).rows.length === n, {
      timeoutMs: 30_000,
      message: 'every task done in the history, copied by the next writer (after the lease of the closed one expired, 15 s)',
    });
    const rows = (await history.searchHistory({ type: 'close', limit: 1000 })).rows;
    expect(rows.map((r) => r.id).sort()).toEqual(Array.from({ length: n }, (_, i) => `t${i}`).sort());
  });

  it("an application closed normally hands its streams to another instance's writer at once, not after its 15 s lease", async () => {
    const schema = newSchema();
    const keyPrefix = uniquePrefix('hist-handover');
    const history = { connection: PG_URL, schema, flushIntervalMs: 50 };
    const done: string[] = [];
    const Worker = workerClass('handover', { concurrency: 20 }, (task: Task) => void done.push(task.id));
    const first = await start({ connection: target.connection, keyPrefix, history }, [Worker]);
    await first.submit.submitMany('handover', Array.from({ length: 50 }, (_, i) => ({ id: `a${i}`, payload: i })));
    await waitFor(() => done.length === 50, { timeoutMs: 10_000, message: 'the first tasks ran' });
    await first.app.get(TaskHistoryService).flush();
    const second = await start({ connection: target.connection, keyPrefix, workers: false, types: { handover: {} }, history });
    await first.close();
    // Submits of the second instance go to the stream the first one's writer held: its flush needs its writer
    // to hold the stream (the first one is gone and will never copy them).
    await second.submit.submitMany('handover', Array.from({ length: 20 }, (_, i) => ({ id: `b${i}`, payload: i, delay: 60_000 })));
    const t0 = performance.now();
    await second.app.get(TaskHistoryService).flush({ timeoutMs: 30_000 });
    expect(performance.now() - t0).toBeLessThan(5000);
    const rows = (await second.app.get(TaskHistoryService).searchHistory({ type: 'handover', limit: 1000 })).rows;
    expect(rows.filter((r) => r.id.startsWith('b')).map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 'waiting'));
  });
});
