/**
 * The retention purge killed between two of its batches.
 *
 * Failure matrix cell (docs/failure-matrix.md, section 3, "Crash: between retention batches"): a purge of
 * 2,000 finished rows, 100 per DELETE statement, in a child process (test/support/history-purge-app.ts,
 * crash hook DQ_DIE_AFTER_DELETES) SIGKILLed right after its third statement: exactly the rows of those
 * statements are gone (each statement whole), every unfinished row is there; the next purge deletes the
 * rest of the finished rows and no unfinished one.
 */
import { killAllChildren, spawnChild } from './support/child';
import { eventMaker, lifeEvents, PG_URL, tableRows, useHistoryStores } from './support/pg';

const openStore = useHistoryStores();

describe('history retention: a purge killed between batches', () => {
  afterEach(() => killAllChildren());

  it('SIGKILL after the third DELETE of 100: those rows gone, no unfinished row deleted; the next purge deletes the rest', async () => {
    const store = await openStore();
    const schema = store.names.schema!;
    const make = eventMaker();
    // 2,000 finished tasks (their whole life), then 300 that are only submitted, and 200 retrying.
    const finished = lifeEvents(2000, make);
    await store.apply('s', finished, finished[finished.length - 1].entryId);
    const open = [
      ...Array.from({ length: 300 }, (_, i) => make('submitted', { id: `open-${i}`, dueAt: 1_700_000_100_000, body: '{}' })),
      ...Array.from({ length: 200 }, (_, i) => make('retrying', { id: `retry-${i}`, attempt: 1, error: { name: 'Error', message: 'boom' } })),
    ];
    await store.apply('s', open, open[open.length - 1].entryId);
    const before = await tableRows(schema);
    const unfinished = before.filter((r) => r.finished_time === null);
    expect([before.length, unfinished.length]).toEqual([2500, 500]);

    const child = spawnChild('test/support/history-purge-app.ts', { DQ_PG_URL: PG_URL, DQ_SCHEMA: schema, DQ_BATCH: '100', DQ_DIE_AFTER_DELETES: '3' });
    const deleted = await child.waitForMessage((m) => m.type === 'deleted', 30_000);
    expect((await child.exited).signal).toBe('SIGKILL');
    expect(deleted.counts).toEqual([100, 100, 100]);

    const after = await tableRows(schema);
    expect(after).toHaveLength(2200);
    expect(after.filter((r) => r.finished_time === null)).toEqual(unfinished);
    expect(after.filter((r) => r.finished_time !== null)).toHaveLength(1700);

    expect(await store.purgeFinishedBefore(Date.now(), 100)).toBe(1700);
    expect(await tableRows(schema)).toEqual(unfinished);
  }, 60_000);
});
