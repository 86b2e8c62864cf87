import type { HistoryEvent, HistorySearch, PgHistoryStore, TaskHistoryRecord } from 'nestjs-distributed-queue/history';
import { useHistoryStores } from './support/pg';

const openStore = useHistoryStores();
const BASE = 1_700_000_000_000;

interface Spec {
  type: string;
  id: string;
  at: number;
  status: 'done' | 'dead' | 'running' | 'waiting';
}

/** 120 tasks of two types; three tasks share each submit time (ties broken by type and id). */
const TASKS: Spec[] = Array.from({ length: 120 }, (_, i) => ({
  type: i % 2 ? 'sms' : 'mail',
  id: `t${String(i).padStart(3, '0')}`,
  at: BASE + Math.floor(i / 3) * 1000,
  status: (['done', 'dead', 'running', 'waiting'] as const)[i % 4],
}));

function eventsOf(t: Spec, seq: number): HistoryEvent[] {
  const e = (event: HistoryEvent['event'], dt: number, extra: Partial<HistoryEvent> = {}): HistoryEvent => ({
    event, type: t.type, id: t.id, at: t.at + dt, entryId: `${t.at + dt}-${seq}`, ...extra,
  });
  const events = [e('submitted', 0, { body: '{}' })];
  if (t.status !== 'waiting') events.push(e('started', 10, { attempt: 1 }));
  if (t.status === 'done') events.push(e('completed', 20, { attempt: 1 }));
  if (t.status === 'dead') events.push(e('dead', 20, { attempt: 1, error: { name: 'E', message: 'x' } }));
  return events;
}

async function seeded(): Promise<PgHistoryStore> {
  const store = await openStore();
  await store.apply('s', TASKS.flatMap((t, i) => eventsOf(t, i)), '1-0');
  return store;
}

/** Every page of a search, following the cursors (bounded). */
async function allPages(store: PgHistoryStore, query: HistorySearch): Promise<TaskHistoryRecord[][]> {
  const pages: TaskHistoryRecord[][] = [];
  let cursor: string | undefined;
  do {
    const page = await store.search({ ...query, cursor });
    pages.push(page.rows);
    cursor = page.nextCursor;
    if (pages.length > 200) throw new Error('paging does not end');
  } while (cursor);
  return pages;
}

describe('PgHistoryStore: getHistory and search', () => {
  it('getHistory gives a task row, or null', async () => {
    const store = await seeded();
    expect(await store.getHistory('sms', 't001')).toMatchObject({ type: 'sms', id: 't001', status: 'dead', createdAt: BASE });
    expect(await store.getHistory('mail', 't001')).toBeNull();
  });

  it.each<[string, HistorySearch, (t: Spec) => boolean]>([
    ['everything', {}, () => true],
    ['one type', { type: 'mail' }, (t) => t.type === 'mail'],
    ['type and status', { type: 'sms', status: 'dead' }, (t) => t.type === 'sms' && t.status === 'dead'],
    ['a status', { status: 'running' }, (t) => t.status === 'running'],
    ['a time range', { from: BASE + 5000, to: BASE + 20_000 }, (t) => t.at >= BASE + 5000 && t.at < BASE + 20_000],
  ])('search (%s): pages of 7 give every matching row once, newest first', async (_, query, wanted) => {
    const store = await seeded();
    const pages = await allPages(store, { ...query, limit: 7 });
    const rows = pages.flat();
    const expected = TASKS.filter(wanted);
    expect(pages.slice(0, -1).every((p) => p.length === 7)).toBe(true);
    expect(rows.map((r) => `${r.type}/${r.id}`).sort()).toEqual(expected.map((t) => `${t.type}/${t.id}`).sort());
    expect(new Set(rows.map((r) => `${r.type}/${r.id}`)).size).toBe(rows.length);
    for (let i = 1; i < rows.length; i++) expect(rows[i - 1].createdAt!).toBeGreaterThanOrEqual(rows[i].createdAt!);
    expect(rows).toEqual((await store.search({ ...query, limit: 1000 })).rows);
  });

  it('a page that ends the results has no nextCursor', async () => {
    const store = await seeded();
    expect(await store.search({ type: 'mail', status: 'done', limit: 30 })).toEqual({ rows: expect.any(Array) });
    expect((await store.search({ type: 'nothing' })).rows).toEqual([]);
  });

  it.each<[HistorySearch, string]>([
    [{ limit: 0 }, 'limit'],
    [{ limit: 1001 }, 'limit'],
    [{ cursor: 'bm90IGEgY3Vyc29y' }, 'cursor'],
    [{ from: BASE + 10, to: BASE }, 'from'],
    [{ status: 'lost' as never }, 'status'],
  ])('search rejects %j naming %s', async (query, argument) => {
    const store = await openStore();
    let call: Promise<unknown> | undefined;
    expect(() => (call = store.search(query))).not.toThrow();
    await expect(call).rejects.toMatchObject({ name: 'InvalidArgumentError', argument });
  });
});

describe('PgHistoryStore: retention', () => {
  it('purges only rows finished before the cutoff, in bounded batches', async () => {
    const store = await seeded();
    const cutoff = BASE + 20_000;
    const old = TASKS.filter((t) => (t.status === 'done' || t.status === 'dead') && t.at + 20 < cutoff);
    expect(old.length).toBe(30);
    const query = jest.spyOn((store as unknown as { pool: { query: () => unknown } }).pool, 'query');
    expect(await store.purgeFinishedBefore(cutoff, 7)).toBe(30);
    // 7 + 7 + 7 + 7 + 2, then one that finds none.
    expect(query).toHaveBeenCalledTimes(6);
    query.mockRestore();
    const left = (await store.search({ limit: 1000 })).rows.map((r) => `${r.type}/${r.id}`).sort();
    const gone = new Set(old.map((t) => `${t.type}/${t.id}`));
    expect(left).toEqual(TASKS.map((t) => `${t.type}/${t.id}`).filter((k) => !gone.has(k)).sort());
    expect(await store.purgeFinishedBefore(cutoff)).toBe(0);
    await expect(store.purgeFinishedBefore(Number.NaN)).rejects.toMatchObject({ argument: 'cutoffMs' });
    await expect(store.purgeFinishedBefore(cutoff, 0)).rejects.toMatchObject({ argument: 'batch' });
  });
});
