import { randomBytes } from 'crypto';
import { Client } from 'pg';
import { Module } from '@nestjs/common';
import { Registry } from 'prom-client';
import { NestFactory } from '@nestjs/core';
import {
  DistributedQueueDashboardModule, DistributedQueueModule, HistoryNotConfiguredError, InvalidOptionsError, TaskHistoryService,
  TaskSubmitService, type Task, type TaskHistoryRecord,
} from 'nestjs-distributed-queue';
import { keysOf, startQueueApp, useQueueApps, workerClass, type QueueApp } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { startTcpProxy } from './support/tcp-proxy';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const PG = 'postgres://postgres@127.0.0.1:5432/test';

/** A schema of its own per test, dropped afterwards. */
function useSchemas() {
  const made: string[] = [];
  afterAll(async () => {
    const client = new Client({ connectionString: PG });
    await client.connect();
    for (const schema of made) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });
  return async (): Promise<string> => {
    const schema = `dq_hist_${randomBytes(4).toString('hex')}`;
    const client = new Client({ connectionString: PG });
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.end();
    made.push(schema);
    return schema;
  };
}

const historyOf = (app: QueueApp): TaskHistoryService => app.app.get(TaskHistoryService);

describe.each(getTargets().map((t) => [t.name, t] as const))('task history in PostgreSQL on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  const newSchema = useSchemas();

  it("keeps each task's life: submitted, started, retried, done, dead, cancelled, with times, attempts and machine", async () => {
    const schema = await newSchema();
    const Worker = workerClass<{ mode: string }>('hist', { concurrency: 4, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 10 } }, (task: Task<{ mode: string }>) => {
      if (task.payload.mode === 'always' || (task.payload.mode === 'once' && task.attempt === 1)) throw new RangeError(`no ${task.id}`);
    });
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('hist'), history: { connection: PG, schema, flushIntervalMs: 50 } }, [Worker]);
    await app.submit.submitMany('hist', [
      { id: 'ok', payload: { mode: 'ok' } },
      { id: 'once', payload: { mode: 'once' } },
      { id: 'always', payload: { mode: 'always' } },
      { id: 'later', payload: { mode: 'ok' }, delay: 60_000 },
    ]);
    await app.submit.cancel('hist', 'later');
    const history = historyOf(app);
    const rows = await waitFor(async () => {
      await history.flush();
      const found = await Promise.all(['ok', 'once', 'always', 'later'].map((id) => history.getHistory('hist', id)));
      return found.every((r) => r && ['done', 'dead', 'cancelled'].includes(r.status)) ? (found as TaskHistoryRecord[]) : null;
    }, { timeoutMs: 15_000, message: 'four finished rows' });
    const [ok, once, always, later] = rows;
    expect(ok).toMatchObject({ type: 'hist', id: 'ok', status: 'done', attempts: 1, payload: { mode: 'ok' }, lastError: null });
    expect(ok.machine).toMatch(/\/\d+$/);
    expect(ok.createdAt).not.toBeNull();
    expect(ok.startedAt! >= ok.createdAt!).toBe(true);
    expect(ok.finishedAt! >= ok.startedAt!).toBe(true);
    expect(once).toMatchObject({ status: 'done', attempts: 2, lastError: { name: 'RangeError', message: 'no once' } });
    expect(always).toMatchObject({ status: 'dead', attempts: 2, lastError: { name: 'RangeError', message: 'no always' } });
    expect(later).toMatchObject({ status: 'cancelled', delayMs: expect.any(Number) });
    expect(later.delayMs).toBeGreaterThan(59_000);
    const page = await history.searchHistory({ type: 'hist', status: 'done', limit: 1 });
    expect(page.rows).toHaveLength(1);
    const next = await history.searchHistory({ type: 'hist', status: 'done', limit: 1, cursor: page.nextCursor });
    expect([...page.rows, ...next.rows].map((r) => r.id).sort()).toEqual(['ok', 'once']);
  });

  it('under load through a PostgreSQL outage, every event lands once when it is back; tasks never wait for it', async () => {
    const schema = await newSchema();
    const proxy = await startTcpProxy({ port: 5432 }, undefined, { raw: true });
    const registry = new Registry();
    try {
      const done: string[] = [];
      const Worker = workerClass('load', { concurrency: 20 }, (task: Task) => void done.push(task.id));
      const app = await start(
        {
          connection: target.connection, keyPrefix: uniquePrefix('hist-out'), metrics: { registry },
          history: { connection: `postgres://postgres@127.0.0.1:${proxy.port}/test`, schema, flushIntervalMs: 50 },
        },
        [Worker],
      );
      const n = 3000;
      const ids: string[] = [];
      const submitBatch = async (from: number) => {
        const res = await app.submit.submitMany('load', Array.from({ length: 250 }, (_, i) => ({ id: `t${from + i}`, payload: from + i })));
        ids.push(...res.map((r) => r.id));
      };
      for (let i = 0; i < 1000; i += 250) await submitBatch(i);
      proxy.down(true);
      for (let i = 1000; i < n; i += 250) await submitBatch(i);
      // Processing goes on while PostgreSQL is unreachable.
      await waitFor(() => done.length === n, { timeoutMs: 20_000, message: 'all tasks ran during the outage' });
      const history = historyOf(app);
      // PostgreSQL is unreachable: the events wait in the stream, and the backlog metric shows them.
      await expect(history.searchHistory({ type: 'load', limit: 1 })).rejects.toThrow();
      const backlog = await registry.getSingleMetricAsString('dq_history_backlog_entries');
      expect(Number(/dq_history_backlog_entries\{stream="[^"]*load[^"]*"\} (\d+)/.exec(backlog)?.[1])).toBeGreaterThan(0);
      proxy.down(false);
      await waitFor(async () => (await history.searchHistory({ type: 'load', status: 'done', limit: 1000 })).rows.length > 0, { timeoutMs: 20_000 });
      const rows: TaskHistoryRecord[] = [];
      await waitFor(async () => {
        rows.length = 0;
        let cursor: string | undefined;
        do {
          const page = await history.searchHistory({ type: 'load', limit: 1000, cursor });
          rows.push(...page.rows);
          cursor = page.nextCursor;
        } while (cursor);
        return rows.length === n && rows.every((r) => r.status === 'done');
      }, { timeoutMs: 30_000, message: 'every task done in the history' });
      expect(new Set(rows.map((r) => r.id)).size).toBe(n);
      expect(rows.every((r) => r.attempts === 1 && r.startedAt !== null && r.createdAt !== null)).toBe(true);
    } finally {
      await proxy.close();
    }
  });

  it('an entry the store cannot apply is skipped (and logged): it blocks nothing after it', async () => {
    const schema = await newSchema();
    const prefix = uniquePrefix('hist-bad-entry');
    const Worker = workerClass('he', {}, () => undefined);
    const app = await start({ connection: target.connection, keyPrefix: prefix, history: { connection: PG, schema, flushIntervalMs: 50 } }, [Worker]);
    await redis().xadd(keysOf(prefix, 'he').log, '*', 'e', 'submitted', 'ids', '["bad"]', 'due', '["not a time"]');
    await app.submit.submit('he', { fine: true }, { id: 'good' });
    const history = historyOf(app);
    await waitFor(async () => (await history.getHistory('he', 'good'))?.status === 'done', { timeoutMs: 10_000, message: 'the good task copied' });
    expect(await history.getHistory('he', 'bad')).toBeNull();
  });

  it('ordered tasks: rows from the submit to the end, with key, partition, payload, start and machine', async () => {
    const schema = await newSchema();
    const Worker = workerClass<number>('acct', { ordered: true, maxAttempts: 1 }, (task) => {
      if (task.payload === 3) throw new Error('three');
    });
    const app = await start(
      { connection: target.connection, keyPrefix: uniquePrefix('hist-ord'), route: routeTestOptions('hq', 'm1', 4), history: { connection: PG, schema, flushIntervalMs: 50 } },
      [Worker],
    );
    const submitted = await app.submit.submitOrderedMany('acct', [0, 1, 2, 3].map((i) => ({ key: `k${i % 2}`, payload: i })));
    const history = historyOf(app);
    const rows = await waitFor(async () => {
      await history.flush();
      const found = await Promise.all(submitted.map((s) => history.getHistory('acct', s.id)));
      return found.every((r) => r && (r.status === 'done' || r.status === 'dead')) ? (found as TaskHistoryRecord[]) : null;
    }, { timeoutMs: 15_000, message: 'ordered rows' });
    expect(rows.map((r) => r.status)).toEqual(['done', 'done', 'done', 'dead']);
    expect(rows.map((r) => r.payload)).toEqual([0, 1, 2, 3]);
    expect(rows.every((r) => r.createdAt !== null && r.dueAt !== null && r.finishedAt! >= r.createdAt!)).toBe(true);
    expect(rows.every((r) => r.startedAt! >= r.createdAt! && r.finishedAt! >= r.startedAt! && r.machine === 'm1')).toBe(true);
    expect(rows[3]).toMatchObject({ key: 'k1', partition: submitted[3].partition, lastError: { message: 'three' } });
  });
});

describe('the dashboard with the history', () => {
  const newSchema = useSchemas();

  it("shows a task's history row (and says the history is configured)", async () => {
    const schema = await newSchema();
    const Worker = workerClass('dh', {}, () => undefined);
    @Module({
      imports: [
        DistributedQueueModule.forRoot({ connection: getTargets()[0].connection, keyPrefix: uniquePrefix('hist-dash'), history: { connection: PG, schema, flushIntervalMs: 50 } }),
        DistributedQueueDashboardModule.forRoot({ token: 'a-dashboard-token-for-tests' }),
      ],
      providers: [Worker],
    })
    class HistoryDashboardModule {}
    const app = await NestFactory.create(HistoryDashboardModule, { logger: ['error'] });
    try {
      await app.listen(0, '127.0.0.1');
      const base = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/queues/api`;
      const headers = { authorization: 'Bearer a-dashboard-token-for-tests' };
      await app.get(TaskSubmitService).submit('dh', { x: 1 }, { id: 'one' });
      const row = await waitFor(async () => {
        const res = await fetch(`${base}/types/dh/tasks/one/history`, { headers });
        const body = res.status === 200 ? ((await res.json()) as TaskHistoryRecord) : null;
        return body?.status === 'done' ? body : null;
      }, { timeoutMs: 10_000, message: 'history row shown' });
      expect(row).toMatchObject({ id: 'one', type: 'dh', attempts: 1, payload: { x: 1 } });
      expect(((await (await fetch(`${base}/overview`, { headers })).json()) as { history: boolean }).history).toBe(true);
      expect((await fetch(`${base}/types/dh/tasks/none/history`, { headers })).status).toBe(404);
    } finally {
      await app.close();
    }
  });
});

describe('task history options', () => {
  const single = getTargets()[0];

  it('a wrong connection fails at start-up, naming the option', async () => {
    await expect(
      startQueueApp({ connection: single.connection, keyPrefix: uniquePrefix('hist-bad'), types: { t: {} }, workers: false, history: { connection: 'postgres://postgres@127.0.0.1:1/test' } }),
    ).rejects.toThrow(/history\.connection/);
    await expect(startQueueApp({ connection: single.connection, history: { connection: PG, table: 'bad name' } })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(startQueueApp({ connection: single.connection, events: { stream: false }, history: { connection: PG } })).rejects.toThrow(/events\.stream/);
    await expect(startQueueApp({ connection: single.connection, history: { connection: PG, coalesceMs: -1 } })).rejects.toThrow(/history\.coalesceMs/);
    await expect(startQueueApp({ connection: single.connection, history: { connection: PG, recordStarts: 'yes' as never } })).rejects.toThrow(/history\.recordStarts/);
  });

  it('table and schema: one rule (a-z, 0-9, _; not pg_*; table <= 53, schema <= 63 characters), checked at start-up', async () => {
    const refused = async (history: Record<string, unknown>, option: string) => {
      const started = startQueueApp({ connection: single.connection, keyPrefix: uniquePrefix('hist-name'), types: { t: {} }, workers: false, history: { connection: PG, ...history } });
      await expect(started).rejects.toBeInstanceOf(InvalidOptionsError);
      await expect(started).rejects.toMatchObject({ option });
    };
    // PostgreSQL's catalog: a table pg_class would be read from pg_catalog; a schema pg_* cannot be created.
    await refused({ table: 'pg_class' }, 'history.table');
    await refused({ schema: 'pg_catalog' }, 'history.schema');
    await refused({ schema: 'pg_temp_1' }, 'history.schema');
    await refused({ schema: 'information_schema' }, 'history.schema');
    // Upper case: the store quotes names, so "Hist" and hist would be two tables; refused by the option check too.
    await refused({ table: 'Hist' }, 'history.table');
    await refused({ schema: 'Ops' }, 'history.schema');
    // The longest suffix added is _positions (10): a table of 54 characters would make a name PostgreSQL truncates.
    await refused({ table: 'x'.repeat(54) }, 'history.table');
    await refused({ schema: 's'.repeat(64) }, 'history.schema');
    const schema = `dq_hist_${randomBytes(4).toString('hex')}`;
    const app = await startQueueApp({
      connection: single.connection, keyPrefix: uniquePrefix('hist-name'), types: { t: {} }, workers: false,
      history: { connection: PG, table: 't'.repeat(53), schema },
    });
    try {
      expect(await app.app.get(TaskHistoryService).getHistory('t', 'none')).toBeNull();
    } finally {
      await app.close();
      const client = new Client({ connectionString: PG });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    }
  });

  it('without the option: history calls reject with HistoryNotConfiguredError, nothing is recorded', async () => {
    const app = await startQueueApp({ connection: single.connection, keyPrefix: uniquePrefix('hist-off'), types: { t: {} }, workers: false });
    try {
      await expect(app.app.get(TaskHistoryService).getHistory('t', 'x')).rejects.toBeInstanceOf(HistoryNotConfiguredError);
      expect(app.app.get(TaskHistoryService).enabled).toBe(false);
    } finally {
      await app.close();
    }
  });
});
