/**
 * The history writer and fleet listeners read the same event streams: the writer trims what it copied, but
 * never what a follower may not have read yet.
 *
 * Failure matrix cell (docs/failure-matrix.md, events): "History writer and a follower on one stream": a fleet
 * listener that reads every 1 s and a history writer that copies every 20 ms on one type, failures whose
 * entries are a few KiB (a stack: a stream node holds one or two of them, so `XTRIM MINID ~` trims them one
 * by one): the listener hears every event, and the history has every row.
 */
import { Injectable } from '@nestjs/common';
import { OnTaskEvent, TaskHistoryService, type Task, type TaskEvent } from 'nestjs-distributed-queue';
import { PG_URL, useSchemaNames } from './support/pg';
import { useStartedApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const target = getTargets()[0];

const heard: string[] = [];
@Injectable()
class FleetListener {
  @OnTaskEvent('hf.work', '*', { scope: 'fleet' })
  on(event: TaskEvent): void {
    heard.push(`${event.event}:${event.task.id}`);
  }
}

/** Fails from a deep call chain: a stack of about 4 KiB (the bound) in each failure entry. */
function failDeep(depth: number): never {
  if (depth > 0) failDeep(depth - 1);
  throw new Error('a failure with a long stack');
}

describe('the history writer and a fleet listener on one stream', () => {
  const start = useStartedApps();
  const newSchema = useSchemaNames();

  it('the listener hears every event although the writer copies (and trims) far more often than it reads', async () => {
    heard.length = 0;
    const Worker = workerClass('hf.work', { concurrency: 4, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 10 } }, (task: Task<{ fail: boolean }>) => {
      if (!task.payload.fail) return;
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 200;
      try {
        failDeep(150);
      } finally {
        Error.stackTraceLimit = limit;
      }
    });
    const schema = newSchema();
    const app = await start(
      {
        connection: target.connection, keyPrefix: uniquePrefix('hist-fol'),
        events: { followIntervalMs: 1000 },
        history: { connection: PG_URL, schema, flushIntervalMs: 20 },
      },
      [Worker, FleetListener],
    );
    const n = 40;
    await app.submit.submitMany('hf.work', Array.from({ length: n }, (_, i) => ({ id: `t${i}`, payload: { fail: i % 2 === 0 } })));
    const expected = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? `dead:t${i}` : `completed:t${i}`)).sort();
    await waitFor(() => expected.every((e) => heard.includes(e)), { timeoutMs: 15_000, message: 'every outcome heard' }).catch((error: Error) => {
      throw new Error(`${error.message}: missing ${expected.filter((e) => !heard.includes(e)).length} of ${n}`);
    });
    expect(heard.filter((e) => e.startsWith('failed:'))).toHaveLength(n); // two attempts of 20 tasks
    const history = app.app.get(TaskHistoryService);
    await history.flush();
    const rows = await history.searchHistory({ type: 'hf.work', limit: 100 });
    expect(rows.rows).toHaveLength(n);
  }, 60_000);
});
