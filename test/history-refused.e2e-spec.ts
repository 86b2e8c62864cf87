/**
 * Values PostgreSQL refuses: a batch holding one is written all the same, against the machine's PostgreSQL.
 *
 * Failure matrix cells (docs/failure-matrix.md, section 3, "A value PostgreSQL refuses"):
 * - characters text and json refuse (U+0000, and a surrogate without its pair) in an error, a log line or a
 *   result: PostgreSQL's fold fails (a data exception), the batch is decoded in the writer, which writes them
 *   as U+FFFD; nothing is skipped;
 * - a value the decoded batch cannot write either (here an attempt count past PostgreSQL's int): that task's
 *   row is left out and returned as skipped (the writer logs it), every other task of the batch is written,
 *   and the stream's position is recorded: the copy goes on. Before, the batch failed in both ways, the pass
 *   was retried from the same position for good, and every later task's row waited behind it.
 * End to end through the writer: test/history-nul.
 */
import type { StreamEntry } from 'nestjs-distributed-queue/events/stream-entry';
import { tableRows, useHistoryStores } from './support/pg';

const openStore = useHistoryStores();

const batchOf = (entries: StreamEntry[], position: string) => ({
  stream: 's', entries: entries.map((entry) => ({ entry, only: '' })), position, from: { type: 'mail' }, logs: new Map<string, string>(), types: ['mail'], timeoutOf: () => 1000,
});

describe('history store: values PostgreSQL refuses', () => {
  it('NUL characters and lone surrogates in an error, a result and log lines are written as U+FFFD; nothing is skipped', async () => {
    const store = await openStore();
    const error = JSON.stringify({ name: 'Nul\u0000Error', message: 'a\u0000b \ud800 c' });
    const entries: StreamEntry[] = [
      ['10-0', ['e', 'submitted', 'ids', '["a","b","c"]', 'due', '[10,10,10]', 'd', '[0,0,0]', 'b', JSON.stringify(['{"x":"\\u0000"}', '{}', '{}'])]],
      ['11-0', ['e', 'dead', 'ids', '["a"]', 'a', '[1]', 'err', `[${error}]`]],
      ['12-0', ['e', 'completed', 'ids', '["b"]', 'a', '[1]', 'r', JSON.stringify(['"r\\u0000s"'])]],
    ];
    const batch = batchOf(entries, '12-0');
    batch.logs.set('c', 'line\u0000one');
    const skipped = await store.applyEntries(batch);
    expect(skipped).toEqual([]);
    const rows = await tableRows(store.names.schema!);
    expect(rows.map((r) => [r.id, r.status])).toEqual([['a', 'dead'], ['b', 'done'], ['c', 'waiting']]);
    expect(rows[0].last_error).toEqual({ name: 'Nul\ufffdError', message: 'a\ufffdb \ufffd c' });
    expect(rows[0].body).toBe('{"x":"\\u0000"}');
    expect(await store.position('s')).toBe('12-0');
  });

  it('a task the decoded batch cannot write either (an attempt past int): its row is skipped, the others and the position are written', async () => {
    const store = await openStore();
    const entries: StreamEntry[] = [
      ['10-0', ['e', 'submitted', 'ids', '["a","b"]', 'due', '[10,10]', 'd', '[0,0]', 'b', '["{}","{}"]']],
      ['11-0', ['e', 'started', 'ids', '["a","b"]', 'a', '[3000000000,1]', 's', '[11,11]', 'm', 'host/1']],
      ['12-0', ['e', 'completed', 'ids', '["b"]', 'a', '[1]']],
    ];
    const skipped = await store.applyEntries(batchOf(entries, '12-0'));
    expect(skipped.map((s) => s.event.id)).toEqual(['a']);
    expect(skipped[0].problem).toMatch(/^was refused by PostgreSQL \(.*out of range.*\): its task's row is left out of this batch$/);
    const rows = await tableRows(store.names.schema!);
    expect(rows.map((r) => [r.id, r.status])).toEqual([['b', 'done']]);
    expect(await store.position('s')).toBe('12-0');
    // the same batch again (a writer that died before its position was read): the same outcome, nothing twice
    expect((await store.applyEntries(batchOf(entries, '12-0'))).map((s) => s.event.id)).toEqual(['a']);
    expect((await tableRows(store.names.schema!)).map((r) => [r.id, r.status, r.reentry])).toEqual([['b', 'done', rows[0].reentry]]);
  });
});
