/**
 * The longest values a history row holds, written and read back whole.
 *
 * Failure matrix cell (docs/failure-matrix.md, section 3, "Long values"): a task of the longest type (200
 * characters) and the longest id (256 characters), both with multi-byte characters, whose attempt failed
 * with the longest error kept (a name of 200 bytes, a message of exactly MAX_MESSAGE_BYTES UTF-8 bytes, and
 * one much longer, which is kept bounded): the rows are written (dead, with that error) and read back
 * unchanged by getHistory and searchHistory. Both targets.
 */
import { Logger } from '@nestjs/common';
import { TaskHistoryService } from 'nestjs-distributed-queue';
import { boundedMessage, MAX_MESSAGE_BYTES } from 'nestjs-distributed-queue/runtime/error-stack';
import { PG_URL, useSchemaNames } from './support/pg';
import { useStartedApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

/** The longest type (200 characters; 'ü' is 2 UTF-8 bytes). */
const TYPE = `lv.${'ü'.repeat(197)}`;
/** The longest ids (256 characters; '€' is 3 UTF-8 bytes). */
const ID_EXACT = `e-${'€'.repeat(254)}`;
const ID_LONG = `l-${'€'.repeat(254)}`;
/** The longest error name kept whole (200 bytes). */
const NAME = 'E'.repeat(200);
/** An error message of exactly MAX_MESSAGE_BYTES UTF-8 bytes (kept whole), and one far longer (bounded). */
const MESSAGE_EXACT = `${'€'.repeat((MAX_MESSAGE_BYTES - 1) / 3 - 1)}abcd`;
const MESSAGE_LONG = 'm€'.repeat(10_000);

describe.each(getTargets().map((t) => [t.name, t] as const))('history: the longest values of a row on %s', (_name, target) => {
  const start = useStartedApps();
  const newSchema = useSchemaNames();
  afterEach(() => jest.restoreAllMocks());

  it('the longest type (200 chars), id (256 chars) and error message (4 KiB kept) are written and read back whole', async () => {
    expect([TYPE.length, ID_EXACT.length, ID_LONG.length]).toEqual([200, 256, 256]);
    expect(Buffer.byteLength(MESSAGE_EXACT)).toBe(MAX_MESSAGE_BYTES);
    // The failed attempts are logged (their 4 KiB messages): not into the test's output.
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const app = await start(
      { connection: target.connection, keyPrefix: uniquePrefix('hist-long'), history: { connection: PG_URL, schema: newSchema(), flushIntervalMs: 50 } },
      [
        workerClass(TYPE, { maxAttempts: 1 }, (task) => {
          const error = new Error(task.id === ID_EXACT ? MESSAGE_EXACT : MESSAGE_LONG);
          error.name = NAME;
          throw error;
        }),
      ],
    );
    await app.submit.submit(TYPE, { n: 1 }, { id: ID_EXACT });
    await app.submit.submit(TYPE, { n: 2 }, { id: ID_LONG });
    const history = app.app.get(TaskHistoryService);
    const rowOf = (id: string) =>
      waitFor(async () => {
        await history.flush();
        const row = await history.getHistory(TYPE, id);
        return row?.status === 'dead' ? row : null;
      }, { timeoutMs: 15_000, message: `the dead row of ${id.slice(0, 2)}…` });

    const exact = await rowOf(ID_EXACT);
    expect(exact).toMatchObject({ type: TYPE, id: ID_EXACT, status: 'dead', attempts: 1, payload: { n: 1 } });
    expect(exact.lastError!.name).toBe(NAME);
    expect(exact.lastError!.message === MESSAGE_EXACT).toBe(true);

    const long = await rowOf(ID_LONG);
    expect(long).toMatchObject({ type: TYPE, id: ID_LONG, status: 'dead', attempts: 1, payload: { n: 2 } });
    expect(long.lastError!.name).toBe(NAME);
    const kept = boundedMessage(MESSAGE_LONG);
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(long.lastError!.message === kept).toBe(true);

    const page = await history.searchHistory({ type: TYPE, limit: 10 });
    expect(page.rows.map((r) => r.id).sort()).toEqual([ID_EXACT, ID_LONG].sort());
    for (const row of page.rows) expect(row).toEqual(row.id === ID_EXACT ? exact : long);
  });
});
