/**
 * The history writer of a running application whose Redis is black-holed, or restarted without persistence
 * (a redis-server of this file's own; the history in the machine's PostgreSQL).
 *
 * Failure matrix cell (docs/failure-matrix.md, section 3, "Redis down / paused / black-holed / restarted",
 * while running):
 * - black-holed (a proxy that forwards nothing and closes nothing) 4 s, longer than redisTimeoutMs, then
 *   the network back -> no crash (no unhandled rejection), the writer resumes by itself: every task submitted
 *   before and after has its row, done.
 * - restarted without persistence (SIGKILL, started empty) -> no crash, the writer resumes by itself (its
 *   flags and lease are raised again): the tasks submitted after have their rows, done; the rows written
 *   before stay as they were (done, and waiting for the delayed tasks that Redis lost: only what Redis lost
 *   is lost).
 */
import type { Task } from 'nestjs-distributed-queue';
import { PG_URL, tableRows, useSchemaNames } from './support/pg';
import { useStartedApps, workerClass, type QueueApp } from './support/queue-app';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';
import { uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe('history writer: its Redis black-holed or restarted empty while it runs', () => {
  const start = useStartedApps();
  const newSchema = useSchemaNames();
  let server: RedisServerHandle;
  let proxy: TcpProxy | undefined;
  const unhandled: unknown[] = [];
  const record = (reason: unknown): void => void unhandled.push(reason);
  beforeAll(async () => {
    server = await startRedisServer();
    process.on('unhandledRejection', record);
  });
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
    if (!server.isRunning()) await server.restart();
  });
  afterAll(async () => {
    process.off('unhandledRejection', record);
    await server.remove();
  });

  /** Submits until Redis takes it (right after an outage, a submit fails fast until ioredis is connected again). */
  const submitOnceBack = (app: QueueApp, type: string, id: string) =>
    waitFor(() => app.submit.submit(type, id, { id }).then(() => true, () => false), { timeoutMs: 20_000, message: `submit ${id} once Redis is back` });

  /** The table's rows by id: status, once they are all `statuses`' (a map of id to expected status). */
  const rowsBecome = (schema: string, expected: Record<string, string>, message: string) =>
    waitFor(async () => {
      const rows = await tableRows(schema).catch(() => []);
      const found = Object.fromEntries(rows.map((r) => [r.id as string, r.status as string]));
      return Object.keys(expected).every((id) => found[id] === expected[id]) ? rows : null;
    }, { timeoutMs: 30_000, intervalMs: 200, message });

  const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  const all = (list: string[], status: string) => Object.fromEntries(list.map((id) => [id, status]));

  it('black-holed 4 s, then back: no crash, the writer resumes by itself; every task has its row, done', async () => {
    unhandled.length = 0;
    proxy = await startTcpProxy({ port: server.port });
    const schema = newSchema();
    const app = await start(
      {
        connection: `redis://${proxy.host}:${proxy.port}`, keyPrefix: uniquePrefix('hist-rbh'), redisTimeoutMs: 1000, shutdownTimeoutMs: 1000,
        defaults: { pollIntervalMs: 200, visibilityTimeoutMs: 3000 },
        history: { connection: PG_URL, schema, flushIntervalMs: 50 },
      },
      [workerClass('rb', { concurrency: 4 }, () => undefined)],
    );
    const before = ids('before', 20);
    await app.submit.submitMany('rb', before.map((id) => ({ id, payload: id })));
    await rowsBecome(schema, all(before, 'done'), 'the rows written before the outage');
    const more = ids('more', 10);
    for (const id of more) await app.submit.submit('rb', id, { id, delay: 1000 });

    proxy.stall(true);
    await sleep(4000);
    proxy.stall(false);
    // Bytes lost meanwhile leave the open connections unusable: they are cut, as a network reset would.
    proxy.cut();

    const after = ids('after', 20);
    for (const id of after) await submitOnceBack(app, 'rb', id);
    const rows = await rowsBecome(schema, all([...before, ...more, ...after], 'done'), 'every task done in the history');
    expect(rows.map((r) => r.id).sort()).toEqual([...before, ...more, ...after].sort());
    expect(unhandled).toEqual([]);
  }, 60_000);

  it('restarted without persistence: no crash, the writer resumes by itself; rows of what Redis kept are right', async () => {
    unhandled.length = 0;
    const schema = newSchema();
    const app = await start(
      {
        connection: server.url, keyPrefix: uniquePrefix('hist-rempty'), redisTimeoutMs: 1000, shutdownTimeoutMs: 1000,
        defaults: { pollIntervalMs: 200 },
        history: { connection: PG_URL, schema, flushIntervalMs: 50, coalesceMs: 0 },
      },
      [workerClass('re', { concurrency: 4 }, (_task: Task) => undefined)],
    );
    const before = ids('before', 20);
    const lost = ids('lost', 10);
    await app.submit.submitMany('re', before.map((id) => ({ id, payload: id })));
    await app.submit.submitMany('re', lost.map((id) => ({ id, payload: id, delay: 600_000 })));
    const atLoss = await rowsBecome(schema, { ...all(before, 'done'), ...all(lost, 'waiting') }, 'the rows written before the restart');

    server.kill('SIGKILL');
    await sleep(1000);
    await server.restart();

    const after = ids('after', 20);
    for (const id of after) await submitOnceBack(app, 're', id);
    const rows = await rowsBecome(schema, { ...all(before, 'done'), ...all(lost, 'waiting'), ...all(after, 'done') }, 'the tasks submitted after the restart written');
    expect(rows.map((r) => r.id).sort()).toEqual([...before, ...lost, ...after].sort());
    // What was written before the loss is untouched: the delayed tasks Redis lost stay as they were.
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const row of atLoss) expect(byId.get(row.id)).toEqual(row);
    expect(rows.filter((r) => after.includes(r.id as string) && r.reentry !== 1)).toEqual([]);
    expect(unhandled).toEqual([]);
  }, 60_000);
});
