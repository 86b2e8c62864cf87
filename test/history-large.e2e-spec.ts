/**
 * The task history with the largest payload accepted.
 *
 * Failure matrix cell (docs/failure-matrix.md, history): "Largest: 1 MB payload": a delay task and an ordered
 * task, each with a payload of exactly `maxPayloadBytes` (1 MiB by default), are copied into `body` and read
 * back whole by `getHistory`, on the single server and the cluster.
 */
import { TaskHistoryService } from 'nestjs-distributed-queue';

/** maxPayloadBytes by default (README: 1 MiB). */
const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
import { PG_URL, useSchemaNames } from './support/pg';
import { useStartedApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('history of 1 MiB payloads on %s', (_name, target) => {
  const start = useStartedApps();
  const newSchema = useSchemaNames();

  it('copies a payload of exactly maxPayloadBytes into the row, delay and ordered, and reads it back whole', async () => {
    const prefix = uniquePrefix('hist-large');
    const app = await start(
      { connection: target.connection, keyPrefix: prefix, route: routeTestOptions(prefix, 'm1', 2), history: { connection: PG_URL, schema: newSchema(), flushIntervalMs: 50 } },
      [workerClass('hl.delay', {}, () => undefined), workerClass('hl.ordered', { ordered: true }, () => undefined)],
    );
    // The payload's JSON is exactly the limit: a string of that length less its two quotes.
    const payload = 'p'.repeat(DEFAULT_MAX_PAYLOAD_BYTES - 2);
    await app.submit.submit('hl.delay', payload, { id: 'd1' });
    await app.submit.submitOrdered('hl.ordered', 'k', payload, { id: 'o1' });
    const history = app.app.get(TaskHistoryService);
    for (const [type, id] of [['hl.delay', 'd1'], ['hl.ordered', 'o1']]) {
      const row = await waitFor(async () => {
        await history.flush();
        const found = await history.getHistory(type, id);
        return found?.status === 'done' ? found : undefined;
      }, { timeoutMs: 15_000, message: `the row of ${id}` });
      expect(typeof row.payload).toBe('string');
      expect((row.payload as string).length).toBe(payload.length);
      expect(row.payload === payload).toBe(true);
    }
  }, 60_000);
});
