import type { RedisClient } from '../redis/script-loader';

/** Which waiting tasks a page holds: due now or earlier, due later, or all (due time order either way). */
export type WaitingRange = 'ready' | 'delayed' | 'all';

/**
 * A position in the waiting set's (due, submission) order, or, with `turn`, in the turn queue's (turn,
 * submission) order (`due` then holds the turn), or, with `group`, in the groups' queues' (group name, turn,
 * submission) order: a page goes on after it.
 */
export interface WaitingCursor {
  due: number;
  seq: number;
  turn?: boolean;
  group?: string;
}

/** A waiting task of a page (`turn`: of the turn queue or, with `group`, of that group's queue; `due` holding its turn). */
export interface WaitingRow {
  id: string;
  seq: number;
  due: number;
  turn?: boolean;
  group?: string;
}

type StepReply = [number, number, string, string, number, ...(string | number)[]];
type GroupedReply = [number, string, string, string | number, ...(string | number)[]];
interface StepScript {
  dqDelayListWaiting(...args: (string | number)[]): Promise<StepReply>;
  dqDelayListGrouped(...args: (string | number)[]): Promise<GroupedReply>;
}

/** Tasks per page of the walk that skips an offset. */
const SKIP_PAGE = 1000;
/**
 * Steps of one page at most (64 chunks each: 8,000,000 waiting tasks): a walk that the queue's own changes
 * keep sending back (chunks moving under it) ends with the tasks found so far.
 */
const MAX_STEPS = 1000;

const before = (a: WaitingRow, b: WaitingRow): number => a.due - b.due || a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The first `limit` waiting tasks after `after` (from the start when null) in (due, submission) order, of
 * the waiting set whose index is `waiting`. The set is kept in chunks by submission (see
 * scripts/includes/waiting-set.lua), so the page is a merge: each call of `list-waiting-1.lua` reads a
 * bounded number of chunks (at most 64 chunk reads and about 1,000 tasks, well under a millisecond) and
 * returns their first tasks after the cursor; this merges them and goes on until no chunk can hold an
 * earlier task. A page costs Redis O(chunks whose earliest due time comes before the page's last task)
 * chunk reads (at most one per 128 waiting tasks) in separate steps: other clients' commands run between
 * them, at any size. Tasks moving while the page is read may be missed or seen at their new place.
 */
export async function waitingPage(client: RedisClient, waiting: string, range: WaitingRange, after: WaitingCursor | null, limit: number): Promise<WaitingRow[]> {
  const script = client as unknown as StepScript;
  let rows: WaitingRow[] = [];
  const seen = new Set<string>();
  let now = '';
  let last: (string | number)[] = ['', '', 0];
  for (let steps = 0; steps < MAX_STEPS; steps++) {
    const bound = rows.length >= limit ? rows[limit - 1].due : '';
    const [stepNow, done, lastChunk, lastScore, nextRank, ...flat] = await script.dqDelayListWaiting(
      waiting, range, now, after ? after.due : '', after ? after.seq : '', bound, last[0], last[1], last[2], limit,
    );
    now = String(stepNow);
    last = [String(lastChunk ?? ''), String(lastScore ?? ''), Number(nextRank)];
    for (let i = 0; i < flat.length; i += 3) {
      const id = String(flat[i]);
      if (seen.has(id)) continue;
      seen.add(id);
      rows.push({ id, seq: Number(flat[i + 1]), due: Number(flat[i + 2]) });
    }
    rows.sort(before);
    if (rows.length > limit) rows = rows.slice(0, limit);
    if (Number(done) === 1) return rows;
  }
  return rows;
}

/**
 * Waiting tasks `offset + 1` to `offset + limit` in (due, submission) order: the first `offset` are
 * skipped by pages of 1,000 (each read in bounded steps as `waitingPage`): O(offset) work in Redis, but no
 * step longer than the others. A cursor (`waitingPage` after the last task of the page before) costs one page.
 */
export async function waitingSlice(client: RedisClient, waiting: string, range: WaitingRange, offset: number, limit: number): Promise<WaitingRow[]> {
  let after: WaitingCursor | null = null;
  for (let skip = offset; skip > 0; ) {
    const asked = Math.min(SKIP_PAGE, skip);
    const rows = await queuePage(client, waiting, range, after, asked);
    if (rows.length < asked) return [];
    after = rows[rows.length - 1];
    skip -= asked;
  }
  return queuePage(client, waiting, range, after, limit);
}

/**
 * A page of a type's waiting tasks: the waiting set's (due, submission) order, then, for ready tasks, the
 * due tasks of a priority waiting their turn (the turn queue, see scripts/includes/priority.lua) in turn
 * order, each part read as `waitingPage` reads it, then the due tasks waiting in the groups' queues (see
 * `groupedPage`).
 */
export async function queuePage(client: RedisClient, waiting: string, range: WaitingRange, after: WaitingCursor | null, limit: number): Promise<WaitingRow[]> {
  const part = after?.group !== undefined ? 3 : after?.turn ? 2 : 1;
  const rows = part === 1 ? await waitingPage(client, waiting, range, after, limit) : [];
  if (range === 'delayed' || rows.length >= limit) return rows;
  if (part <= 2) {
    const turns = await waitingPage(client, `${waiting}:q`, 'all', part === 2 ? after : null, limit - rows.length);
    rows.push(...turns.map((row) => ({ ...row, turn: true })));
    if (rows.length >= limit) return rows;
  }
  return [...rows, ...(await groupedPage(client, waiting, part === 3 ? after : null, limit - rows.length))];
}

/**
 * The first `limit` due tasks waiting in the groups' queues after `after` (null: from the first group), by
 * group name, then turn and submission: each call of `list-grouped-1.lua` reads at most 64 groups and about
 * 1,000 tasks, from the position the call before returned. A group entering or leaving the rotation keeps
 * its place (groups go by name), so a cursor stays good while the groups change.
 */
export async function groupedPage(client: RedisClient, waiting: string, after: WaitingCursor | null, limit: number): Promise<WaitingRow[]> {
  const script = client as unknown as StepScript;
  const rows: WaitingRow[] = [];
  let from: (string | number)[] = after ? ['0', after.group ?? '', after.due, after.seq] : ['1', '', '', ''];
  for (let steps = 0; steps < MAX_STEPS && rows.length < limit; steps++) {
    const [done, group, turn, seq, ...flat] = await script.dqDelayListGrouped(waiting, ...from, limit - rows.length);
    for (let i = 0; i < flat.length; i += 4) {
      rows.push({ id: String(flat[i]), seq: Number(flat[i + 1]), due: Number(flat[i + 2]), turn: true, group: String(flat[i + 3]) });
    }
    if (Number(done) === 1) break;
    from = ['0', String(group), String(turn), String(seq)];
  }
  return rows;
}
