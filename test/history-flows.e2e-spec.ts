/**
 * History rows carry the flow id (issue 30, item 4): the `flow_id` column (schema version 2), filled from a
 * flow node's task id (`&<flow id>:<ref>`) as rows are written, `flowId` in every record, and the search
 * filter `flowId`; against real PostgreSQL, and real Redis (single server and cluster) for the flows.
 *
 * Failure matrix (each cell a test below):
 * | capability              | cell                                                                            |
 * |-------------------------|---------------------------------------------------------------------------------|
 * | flows run end to end    | a diamond of delay and ordered nodes (on several masters in a cluster), a second flow and plain tasks: searchHistory({ flowId }) answers exactly each flow's nodes, every one with its flowId; plain rows have null; flowId with type, and with limit 2 (keyset pages); an unknown flow: no row; a bad flowId: InvalidArgumentError naming it |
 * | ids that are not nodes' | ids with ':' or '#', a ref with ':' (the flow id ends at the first ':'): written through the store, flow_id as parseFlowNodeId says |
 * | a table of version 1    | opened by this version: migrated to 2 (column and index added, rows kept with flow_id null: no backfill); a later event of an '&' row written by an older writer fills it in (a rolling upgrade); the flow's search uses the index |
 */
import { InvalidArgumentError, TaskHistoryService, type TaskHistoryRecord } from 'nestjs-distributed-queue';
import { HISTORY_MIGRATIONS, migrateHistorySchema } from 'nestjs-distributed-queue/history/pg-history.schema';
import { historyTableNames } from 'nestjs-distributed-queue/history/pg-history.options';
import { Pool } from 'pg';
import { flowEnded, flowsOf, nodeWorker, type NodeRun } from './support/flow-nodes';
import { eventMaker, PG_URL, pgQuery, testSchemaName, useHistoryStores, useSchemaNames } from './support/pg';
import { useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { waitFor } from './support/wait';

const byId = (rows: TaskHistoryRecord[]) => [...rows].sort((a, b) => (a.id < b.id ? -1 : 1));

describe.each(getTargets().map((t) => [t.name, t] as const))('history rows of flows on %s', (_name, target: RedisTarget) => {
  const { start } = useQueueApps(target);
  const newSchema = useSchemaNames();

  it("a flow's rows carry its id and are found by it; other rows have none", async () => {
    const runs: NodeRun[] = [];
    const prefix = uniquePrefix('hist-flow');
    const app = await start(
      {
        connection: target.connection, keyPrefix: prefix, route: routeTestOptions(`${prefix}-q`, 'm1', 4),
        history: { connection: PG_URL, schema: newSchema(), flushIntervalMs: 50 },
      },
      [nodeWorker(runs, 'hf.a', { concurrency: 4 }), nodeWorker(runs, 'hf.b', { concurrency: 4 }), workerClass('hf.o', { ordered: true }, () => 'ordered')],
    );
    const flows = flowsOf(app);
    const history = app.app.get(TaskHistoryService);
    const diamond = await flows.submitFlow([
      { ref: 'a', type: 'hf.a', payload: 1 },
      { ref: 'b', type: 'hf.b', payload: 2, dependsOn: ['a'] },
      { ref: 'c:with:colons', type: 'hf.o', key: 'k1', payload: 3, dependsOn: ['a'] },
      { ref: 'd', type: 'hf.a', payload: 4, dependsOn: ['b', 'c:with:colons'] },
    ], { id: 'diamond.1' });
    const single = await flows.submitFlow([{ ref: 'only', type: 'hf.b', payload: 5 }]);
    await app.submit.submitMany('hf.a', [{ id: 'plain-1', payload: 6 }, { id: 'x:y', payload: 7 }]);
    expect((await flowEnded(flows, diamond.id, 30_000)).state).toBe('completed');
    expect((await flowEnded(flows, single.id, 30_000)).state).toBe('completed');

    const nodeIds = Object.values(diamond.nodes).map((n) => n.id).sort();
    const rows = await waitFor(async () => {
      await history.flush();
      const page = await history.searchHistory({ flowId: diamond.id });
      return page.rows.length === 4 && page.rows.every((r) => r.status === 'done') ? page.rows : null;
    }, { timeoutMs: 30_000, message: "the diamond's 4 rows, done" });
    expect(byId(rows).map((r) => [r.type, r.id, r.flowId])).toEqual(
      byId(rows).map((r) => [diamond.nodes[r.id.slice(r.id.indexOf(':') + 1)].type, r.id, 'diamond.1']),
    );
    expect(rows.map((r) => r.id).sort()).toEqual(nodeIds);
    expect((await history.getHistory('hf.o', '&diamond.1:c:with:colons'))?.flowId).toBe('diamond.1');

    const other = await waitFor(async () => {
      await history.flush();
      const page = await history.searchHistory({ flowId: single.id });
      return page.rows.length === 1 && page.rows[0].status === 'done' ? page.rows : null;
    }, { timeoutMs: 20_000, message: 'the single node flow\'s row' });
    expect(other.map((r) => [r.id, r.flowId])).toEqual([[`&${single.id}:only`, single.id]]);

    for (const id of ['plain-1', 'x:y']) {
      const row = await waitFor(async () => history.getHistory('hf.a', id), { timeoutMs: 20_000, message: `the row of ${id}` });
      expect([id, row.flowId]).toEqual([id, null]);
    }
    const all = await history.searchHistory({ limit: 1000 });
    expect(all.rows.filter((r) => r.flowId === null).map((r) => r.id).sort()).toEqual(['plain-1', 'x:y']);
    expect(all.rows).toHaveLength(7);

    const ofType = await history.searchHistory({ flowId: diamond.id, type: 'hf.a' });
    expect(ofType.rows.map((r) => r.id).sort()).toEqual(['&diamond.1:a', '&diamond.1:d']);
    const first = await history.searchHistory({ flowId: diamond.id, limit: 2 });
    const second = await history.searchHistory({ flowId: diamond.id, limit: 2, cursor: first.nextCursor });
    expect([first.rows.length, second.rows.length, second.nextCursor]).toEqual([2, 2, undefined]);
    expect([...first.rows, ...second.rows].map((r) => r.id).sort()).toEqual(nodeIds);
    expect((await history.searchHistory({ flowId: 'no-such-flow' })).rows).toEqual([]);

    for (const bad of ['', 'a b', 'x'.repeat(65), '&diamond.1', 'diamond.1:a', 5, null]) {
      const refused = history.searchHistory({ flowId: bad as string });
      await expect(refused).rejects.toThrow(InvalidArgumentError);
      await expect(refused).rejects.toMatchObject({ argument: 'flowId' });
    }
  }, 90_000);
});

describe('the flow_id column in the store', () => {
  const openStore = useHistoryStores();

  it('is filled from flow nodes\' ids only: the flow id ends at the first ":"', async () => {
    const store = await openStore();
    const make = eventMaker();
    const ids = ['&f1:a', '&f1:a:b:c', '&f-2.x_y:r', 'plain', 'x:y', '#generated', '&', '&:x'];
    const events = ids.map((id) => make('submitted', { id }));
    await store.apply('s', events, events[events.length - 1].entryId);
    const found = await Promise.all(ids.map(async (id) => [id, (await store.getHistory('mail', id))?.flowId]));
    expect(found).toEqual([
      ['&f1:a', 'f1'], ['&f1:a:b:c', 'f1'], ['&f-2.x_y:r', 'f-2.x_y'], ['plain', null], ['x:y', null], ['#generated', null], ['&', null], ['&:x', null],
    ]);
    expect((await store.search({ flowId: 'f1' })).rows.map((r) => r.id).sort()).toEqual(['&f1:a', '&f1:a:b:c']);
  });

  it('a table of version 1 is migrated: the column and its index added, old rows kept without a flow id until a newer write', async () => {
    const schema = testSchemaName();
    const names = historyTableNames(undefined, schema);
    const pool = new Pool({ connectionString: PG_URL, connectionTimeoutMillis: 5000 });
    const client = await pool.connect();
    try {
      expect(await migrateHistorySchema(client, names, HISTORY_MIGRATIONS.slice(0, 1))).toBe(1);
      // rows as a writer of version 1 left them: an '&' id (a user's before flows, or an old writer's copy of a node)
      for (const id of ['&old:x', 'plain']) {
        await client.query(
          `INSERT INTO ${names.history} (topic, id, status, submitted, create_time, updated_time, last_entry) VALUES ('mail', $1, 'waiting', true, now(), now(), '1-0')`,
          [id],
        );
      }
      const store = await openStore(schema);
      expect(await pgQuery(`SELECT version FROM ${names.version}`)).toEqual([{ version: HISTORY_MIGRATIONS.length }]);
      expect((await store.getHistory('mail', '&old:x'))?.flowId).toBeNull();
      expect((await store.getHistory('mail', 'plain'))?.flowId).toBeNull();
      expect((await store.search({ flowId: 'old' })).rows).toEqual([]);

      const make = eventMaker(Date.now());
      const later = [make('started', { id: '&old:x', attempt: 1 }), make('submitted', { id: '&new:y' })];
      await store.apply('s', later, later[1].entryId);
      expect((await store.getHistory('mail', '&old:x'))).toMatchObject({ flowId: 'old', status: 'running' });
      expect((await store.search({ flowId: 'new' })).rows.map((r) => [r.id, r.flowId])).toEqual([['&new:y', 'new']]);

      // the index serves "all rows of a flow, newest first" (sequential scans off: a tiny table would use one)
      await client.query('SET enable_seqscan = off');
      const plan = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT * FROM ${names.history} WHERE flow_id = 'old' ORDER BY create_time DESC, topic DESC, id DESC LIMIT 101`,
      );
      const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(text).toMatch(/Index Scan Backward using dq_task_history_by_flow/);
      expect(text).not.toMatch(/Sort/);
    } finally {
      client.release();
      await pool.end();
    }
  });
});
