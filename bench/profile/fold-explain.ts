/**
 * `node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/profile/fold-explain.ts [--tasks=N]`:
 * PostgreSQL's plan and timings of the history's fold statement over one batch as the immediate workload
 * writes it (submits of 500 tasks an entry with payloads, completions of 100 an entry with results), on a
 * fresh schema: EXPLAIN ANALYZE of the statement, then the statement alone timed three times (fresh schemas).
 */
import { Client } from 'pg';
import { foldUpsertSql } from 'nestjs-distributed-queue/history/pg-history.fold-sql';
import { historyColumns } from 'nestjs-distributed-queue/history/history-columns';
import { historyTableNames } from 'nestjs-distributed-queue/history/pg-history.options';
import { HISTORY_MIGRATIONS } from 'nestjs-distributed-queue/history/pg-history.schema';
import type { BatchEntry } from 'nestjs-distributed-queue/history/history-store';

const arg = (name: string, fallback: number): number => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const tasks = arg('tasks', 10_000);
const PG = process.env.DQ_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

function batch(): BatchEntry[] {
  const entries: BatchEntry[] = [];
  let ms = 1_700_000_000_000;
  for (let from = 0; from < tasks; from += 500) {
    const ids = Array.from({ length: Math.min(500, tasks - from) }, (_, i) => `#${(from + i).toString(16)}`);
    entries.push({ entry: [`${ms++}-0`, ['e', 'submitted', 'ids', JSON.stringify(ids), 'due', JSON.stringify(ids.map(() => ms)), 'd', JSON.stringify(ids.map(() => 0)), 'b', JSON.stringify(ids.map((_, i) => JSON.stringify({ n: from + i, pad: 'x'.repeat(40) })))]], only: '' });
  }
  for (let from = 0; from < tasks; from += 100) {
    const ids = Array.from({ length: Math.min(100, tasks - from) }, (_, i) => `#${(from + i).toString(16)}`);
    entries.push({ entry: [`${ms++}-0`, ['e', 'completed', 'ids', JSON.stringify(ids), 'a', JSON.stringify(ids.map(() => 1)), 's', JSON.stringify(ids.map(() => ms - 5)), 'm', 'host/1', 'r', JSON.stringify(ids.map(() => null))]], only: '' });
  }
  return entries;
}

async function main(): Promise<void> {
  const client = new Client({ connectionString: PG });
  await client.connect();
  const workMem = process.argv.find((a) => a.startsWith('--work-mem='))?.split('=')[1];
  if (workMem) await client.query(`SET work_mem = '${workMem}'`);
  const params = (): unknown[] => [...historyColumns(batch()), 'bench', null, '{}', '{"bench":30000}'];
  const rounds = arg('rounds', 4);
  for (let round = 0; round < rounds; round++) {
    const schema = `fold_explain_${process.pid}_${round}`;
    const names = historyTableNames(undefined, schema);
    await client.query(`CREATE SCHEMA ${schema}`);
    for (const step of HISTORY_MIGRATIONS) for (const sql of step(names)) await client.query(sql);
    const sql = foldUpsertSql(names);
    if (round === 0) {
      const plan = await client.query(`EXPLAIN (ANALYZE, BUFFERS, TIMING) ${sql}`, params());
      console.log(plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
    } else {
      const p = params();
      const t0 = process.hrtime.bigint();
      await client.query(sql, p);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      console.log(`round ${round}: ${tasks} tasks in ${ms.toFixed(1)} ms: ${((ms * 1000) / tasks).toFixed(1)} µs a task`);
    }
    await client.query(`DROP SCHEMA ${schema} CASCADE`);
  }
  await client.end();
}

void main();
