/**
 * Values PostgreSQL refuses even decoded: the history goes on, and keeps what it can of them.
 *
 * Failure matrix cell (docs/failure-matrix.md, section 3, "A value PostgreSQL refuses"): PostgreSQL's text and
 * jsonb hold no NUL character (U+0000), and jsonb no lone surrogate (U+D800-U+DFFF unpaired). A handler's
 * error message, error name or log line may hold them; JavaScript and Redis keep them. Before the fix, the
 * batch holding such an event failed in PostgreSQL's fold (a data exception), then again decoded in the
 * writer (class 22 again): the stream's copy stopped there for good, every later task's row with it, until
 * the backlog cap dropped events. Now the batch that PostgreSQL's fold refuses is written decoded by the
 * writer, with such characters as U+FFFD (the replacement character), and the tasks after it are written too.
 * (A Node string sent to Redis carries a lone surrogate as U+FFFD already; the NUL is what reached PostgreSQL.)
 * Both targets.
 */
import { Logger } from '@nestjs/common';
import { TaskHistoryService } from 'nestjs-distributed-queue';
import { PG_URL, useSchemaNames } from './support/pg';
import { useStartedApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('history: characters PostgreSQL refuses on %s', (_name, target) => {
  const start = useStartedApps();
  const newSchema = useSchemaNames();
  afterEach(() => jest.restoreAllMocks());

  it('an error with a NUL and a lone surrogate: its row is written with U+FFFD for them, and the tasks after it are written too', async () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const app = await start(
      { connection: target.connection, keyPrefix: uniquePrefix('hist-nul'), history: { connection: PG_URL, schema: newSchema(), flushIntervalMs: 50 } },
      [
        workerClass('nul', { maxAttempts: 1 }, (task) => {
          if (task.id !== 'bad') return { ok: task.id };
          const error = new Error('before\u0000after \ud800 end');
          error.name = 'Nul\u0000Error';
          throw error;
        }),
      ],
    );
    const history = app.app.get(TaskHistoryService);
    await app.submit.submit('nul', { n: 1 }, { id: 'bad' });
    await waitFor(async () => (await app.inspect.getTask('nul', 'bad'))?.state === 'dead', { timeoutMs: 10_000, message: 'the task dead' });
    await app.submit.submit('nul', { n: 2 }, { id: 'after' });
    await waitFor(async () => (await app.inspect.getTask('nul', 'after'))?.state === 'done', { timeoutMs: 10_000, message: 'the next task done' });

    await history.flush({ timeoutMs: 10_000 });
    const bad = await history.getHistory('nul', 'bad');
    expect(bad).toMatchObject({ status: 'dead', attempts: 1, payload: { n: 1 } });
    expect(bad!.lastError).toMatchObject({ name: 'Nul\ufffdError', message: 'before\ufffdafter \ufffd end' });
    expect(await history.getHistory('nul', 'after')).toMatchObject({ status: 'done', payload: { n: 2 } });
  });
});
