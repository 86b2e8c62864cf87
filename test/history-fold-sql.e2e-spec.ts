/**
 * The history's two ways of writing a batch of stream entries write the same rows, against the machine's
 * PostgreSQL:
 * - PostgreSQL decodes and folds the raw entries (PgHistoryStore.applyEntries: pg-history.fold-sql.ts), the
 *   writer's way;
 * - the writer's process decodes and folds them (PgHistoryStore.applyDecoded: history-decode.ts,
 *   history-fold.ts), the way a batch with a malformed entry takes.
 *
 * Random streams (seeded: a failure names its seed) of every event with every field the scripts log: reused
 * ids (a second submit restarts the row), errors with and without stacks, results, log lines, flow nodes'
 * ids, route partitions' per-task types and keys, texts with quotes, backslashes and other scripts, events
 * the history skips (progress), entries with some of their tasks only (those the writer does not hold
 * back); cut into random batches, each applied twice (idempotence), the rows of the two schemas compared
 * column by column. Then a malformed entry: the batch is written the second way, the
 * bad event left out.
 */
import type { StreamEntry } from 'nestjs-distributed-queue/events/stream-entry';
import type { EntryBatch } from 'nestjs-distributed-queue/history/history-store';
import { tableRows, useHistoryStores } from './support/pg';

const openStore = useHistoryStores();

/** A seeded PRNG (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TEXTS = ['{}', '{"q":"a \\"quoted\\" \\\\ back"}', '"ünïcødé ✓ 日本"', '[1,2,3]', 'null', '{"n":12345678901234}'];

/** A random stream of `count` entries: route-partition style (per-task types and keys) when `route`. */
function randomStream(rnd: () => number, count: number, route: boolean): StreamEntry[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const ids = Array.from({ length: 12 }, (_, i) => (i % 5 === 0 ? `&flow${i}:node${i}` : `task-${i}`));
  const entries: StreamEntry[] = [];
  let ms = 1_700_000_000_000;
  for (let n = 0; n < count; n++) {
    ms += 1 + Math.floor(rnd() * 3);
    const event = pick(['submitted', 'submitted', 'started', 'completed', 'retrying', 'dead', 'cancelled', 'recovered', 'rescheduled', 'progress']);
    const tasks = [...new Set(Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => pick(ids)))];
    const fields: string[] = ['e', event, 'ids', JSON.stringify(tasks)];
    const each = (f: () => unknown) => JSON.stringify(tasks.map(f));
    if (route) fields.push('t', each(() => pick(['pay', 'ship'])), 'k', each(() => pick(['acct-1', 'acct-2'])));
    if (event === 'submitted' || event === 'rescheduled') {
      const delays = tasks.map(() => (rnd() < 0.5 ? 0 : Math.floor(rnd() * 10_000)));
      fields.push('due', JSON.stringify(delays.map((d) => ms + d)), 'd', JSON.stringify(delays));
      if (event === 'submitted') fields.push('b', each(() => pick(TEXTS)));
    } else if (event !== 'cancelled') {
      fields.push('a', each(() => 1 + Math.floor(rnd() * 3)));
    }
    if (['started', 'completed', 'retrying', 'dead'].includes(event)) {
      fields.push('s', each(() => (rnd() < 0.2 ? 0 : ms - Math.floor(rnd() * 50))), 'm', pick(['host-a/1', 'host-b/2', '']));
    }
    if (event === 'completed' && rnd() < 0.7) fields.push('r', each(() => (rnd() < 0.8 ? pick(TEXTS) : null)));
    if (event === 'retrying' || event === 'dead' || (event === 'cancelled' && rnd() < 0.5)) {
      fields.push('err', each(() => (rnd() < 0.1 ? null : { name: pick(['Error', 'TypeError']), message: pick(TEXTS), ...(rnd() < 0.5 ? { stack: `at x (${pick(TEXTS)})` } : {}) })));
    }
    if (event === 'progress') fields.push('p', each(() => 50));
    entries.push([`${ms}-${n % 3}`, fields]);
  }
  return entries;
}

const TIMEOUTS: Record<string, number> = { mail: 30_000, pay: 5_000, ship: 60_000 };

describe('history: PostgreSQL folds raw entries into the rows the decoder writes', () => {
  // NOTE: 40 seeds a kind, in tests of 10 (one test of 40 took 9 s alone and over a minute in a loaded full run).
  for (const route of [false, true]) for (let first = 1; first <= 40; first += 10) {
    it(`${route ? 'route partition' : 'delay type'} streams, seeds ${first}–${first + 9} of 60 entries in random batches`, async () => {
      const folded = await openStore();
      const decoded = await openStore();
      for (let seed = first; seed < first + 10; seed++) {
        const rnd = random(seed * (route ? 7 : 1));
        const entries = randomStream(rnd, 60, route);
        const logs = new Map([['task-1', '0\n[1,1,"x"]'], ['&flow5:node5', '2\n[2,9,"q \\"y\\""]']]);
        const from = route ? { partition: 3 } : { type: 'mail' };
        const stream = `s-${route}-${seed}`;
        for (let at = 0; at < entries.length; ) {
          const size = 1 + Math.floor(rnd() * 12);
          // NOTE: some entries with some of their tasks only, as the writer sends those whose other tasks it holds back.
          const part = entries.slice(at, at + size).map((entry) => ({
            entry, only: rnd() < 0.7 ? '' : (JSON.parse(entry[1][3]) as string[]).map(() => (rnd() < 0.5 ? '1' : '0')).join(''),
          }));
          at += size;
          const batch: EntryBatch = {
            stream, entries: part, position: part[part.length - 1].entry[0], from, logs,
            types: route ? ['pay', 'ship'] : ['mail'], timeoutOf: (type) => TIMEOUTS[type],
          };
          for (let twice = 0; twice < 2; twice++) {
            expect(await folded.applyEntries(batch)).toEqual([]);
            expect(await decoded.applyDecoded(batch)).toEqual([]);
          }
        }
        const rows = await tableRows(folded.names.schema!);
        expect({ seed, rows }).toEqual({ seed, rows: await tableRows(decoded.names.schema!) });
        expect(rows.length).toBeGreaterThan(0);
      }
    });
  }

  it('a malformed entry: the batch is decoded in the writer instead, the bad event left out and returned, the rest written', async () => {
    const store = await openStore();
    const entries: StreamEntry[] = [
      ['10-0', ['e', 'submitted', 'ids', '["a","b"]', 'due', '[10,10]', 'd', '[0,0]', 'b', '["{}","{}"]']],
      ['11-0', ['e', 'completed', 'ids', '["a"]', 'a', '[1.5]']],
      ['12-0', ['e', 'completed', 'ids', '["b"]', 'a', '[1]', 'r', 'not json']],
    ];
    const skipped = await store.applyEntries({ stream: 's', entries: entries.map((entry) => ({ entry, only: '' })), position: '12-0', from: { type: 'mail' }, logs: new Map(), types: ['mail'], timeoutOf: () => 1000 });
    expect(skipped.map((s) => [s.event.id, s.problem])).toEqual([['a', 'has a attempt that is not an integer']]);
    const rows = await tableRows(store.names.schema!);
    expect(rows.map((r) => [r.id, r.status, r.result])).toEqual([
      ['a', 'waiting', null],
      ['b', 'done', null],
    ]);
    expect(await store.position('s')).toBe('12-0');
  });
});
