/**
 * A child process that runs the history's retention purge on a store, for crash tests of the purge.
 * env: DQ_PG_URL, DQ_SCHEMA, DQ_BATCH (rows per DELETE), DQ_DIE_AFTER_DELETES=n (crash hook: SIGKILL this
 * process right after its n-th DELETE statement answered, before the next; a 'deleted' message first, with
 * the rows each statement deleted).
 */
import { PgHistoryStore } from 'nestjs-distributed-queue/history';

const send = (message: object) => process.send?.(message);

async function main(): Promise<void> {
  const store = await PgHistoryStore.open({ connection: process.env.DQ_PG_URL!, schema: process.env.DQ_SCHEMA! });
  const dieAfter = Number(process.env.DQ_DIE_AFTER_DELETES ?? '0');
  const pool = (store as unknown as { pool: { query: (...args: unknown[]) => Promise<{ rowCount: number | null }> } }).pool;
  const query = pool.query.bind(pool);
  const counts: number[] = [];
  pool.query = async (...args: unknown[]) => {
    const result = await query(...args);
    if (String(args[0]).trimStart().startsWith('DELETE')) {
      counts.push(result.rowCount ?? 0);
      if (counts.length === dieAfter) {
        await new Promise<never>(() => process.send!({ type: 'deleted', counts }, () => process.kill(process.pid, 'SIGKILL')));
      }
    }
    return result;
  };
  send({ type: 'purging' });
  const total = await store.purgeFinishedBefore(Date.now(), Number(process.env.DQ_BATCH ?? '1000'));
  send({ type: 'purged', total, counts });
  await store.close();
}

main().then(
  () => process.send?.({ type: 'exit' }, () => process.exit(0)),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
