import { jsonList as list, type StreamEntry } from '../events/stream-entry';

/** At most this many tasks per stream are held back in memory; past it the oldest are written. */
export const MAX_HELD_TASKS = 50_000;

/** The events that end a task (its row is final until the id is reused). */
const ENDS = new Set(['completed', 'dead', 'cancelled']);

/** A stream entry read by the writer, with what holding its tasks back needs of it. */
export interface HeldEntry {
  entry: StreamEntry;
  /** The entry's event (`e`), '' when it has none. */
  event: string;
  /** Its task ids (`ids`), [] when unreadable. */
  ids: unknown[];
  /** Its tasks' types (`t`, route partitions' entries), when given. */
  types?: unknown[];
  /** The entry before it in the stream: reading again from there finds it. */
  before: string;
  /** 1 for each of its tasks held back now (by index in `ids`); undefined until one is. */
  held?: Uint8Array;
  /** How many are. */
  holding: number;
  /** Indexes of its tasks to write in this pass though the entry was written before (held tasks released). */
  resend?: number[];
}

/** An entry to write: which of its tasks ('' all, else a character per task of `ids`: '1' written). */
export interface EntryToWrite {
  held: HeldEntry;
  only: string;
}

/** A task held back: the entries holding its events (its submit's first), and until when. */
interface HeldTask {
  key: string;
  /** performance.now() past which it is written even if it has not ended. */
  until: number;
  entry: HeldEntry;
  index: number;
  /** Its later events' entries and indexes, when it has any before its end. */
  more?: (HeldEntry | number)[];
}

/** Marks task `index` of `h` held. */
function markHeld(h: HeldEntry, index: number): void {
  h.held ??= new Uint8Array(h.ids.length);
  if (h.held[index] === 0) {
    h.held[index] = 1;
    h.holding++;
  }
}

/** An entry's event, ids, types and due times (the only fields parsed in the writer's process). */
function readEntry(entry: StreamEntry, before: string): HeldEntry & { dues?: unknown[] } {
  const flat = entry[1];
  let event = '';
  let ids: string | undefined;
  let types: string | undefined;
  let dues: string | undefined;
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = flat[i];
    if (name === 'e') event = flat[i + 1];
    else if (name === 'ids') ids = flat[i + 1];
    else if (name === 't') types = flat[i + 1];
    else if (name === 'due') dues = flat[i + 1];
  }
  const out: HeldEntry & { dues?: unknown[] } = { entry, event, ids: list(ids), before, holding: 0 };
  if (types !== undefined) out.types = list(types);
  if (event === 'submitted' && dues !== undefined) out.dues = list(dues);
  return out;
}

/**
 * One stream's copy state in the history writer: the last entry read, and the tasks held back.
 *
 * A task submitted less than `coalesceMs` ago that has not ended is held back (its events kept in memory,
 * its row not written), so that a task that ends soon after its submit is written once, from its submit to
 * its end (one row version instead of two or three: PostgreSQL's cost per task halves). A task due later
 * than the window cannot end within it and is not held. Every other task's events are written at once. The
 * position recorded in PostgreSQL stays before the oldest held task's submit, so a writer that dies (or
 * loses its lease) loses nothing: the next one reads those entries again, and the rows written meanwhile
 * ignore what they already hold (the upsert only moves forward).
 */
export class HistoryHold {
  /** The last entry read (undefined: start from the recorded position). */
  cursor?: string;
  private readonly tasks = new Map<string, HeldTask>();

  /**
   * @param coalesce false: nothing is held (a stream whose tasks end elsewhere: a route queue's delay queue)
   * @param maxHeld tasks held at most (past it the oldest are written)
   */
  constructor(
    private readonly coalesce = true,
    private readonly maxHeld = MAX_HELD_TASKS,
  ) {}

  /** Tasks held back now. */
  get holding(): number {
    return this.tasks.size;
  }

  /** Forgets what was read and held (after a failure or a lost lease: the next pass starts from PostgreSQL's position). */
  reset(): void {
    this.cursor = undefined;
    this.tasks.clear();
  }

  /**
   * Adds entries read after the cursor (moving it past them) and splits what is known: what to write now
   * (the tasks not held, and the held ones that ended, were held `coalesceMs`, or are the oldest past the
   * cap; all of them when `force`), in stream order, and the position to record with it.
   */
  take(entries: readonly StreamEntry[], coalesceMs: number, force: boolean): { entries: EntryToWrite[]; position: string } {
    const now = performance.now();
    const dueBy = Date.now() + coalesceMs;
    const released = new Set<HeldTask>();
    const read: HeldEntry[] = [];
    let before = this.cursor ?? '0-0';
    for (const entry of entries) {
      const h = readEntry(entry, before);
      before = entry[0];
      read.push(h);
      if (this.coalesce) this.hold(h, now + coalesceMs, dueBy, released);
    }
    this.cursor = before;
    // NOTE: tasks are held in the order their submits were read: the expired ones, and the oldest past the
    // cap, are at the map's front.
    for (const task of this.tasks.values()) {
      if (!force && task.until > now && this.tasks.size - released.size <= this.maxHeld) break;
      released.add(task);
    }
    return { entries: this.toWrite(read, released), position: this.position() };
  }

  /** Holds the tasks of a new entry that are submits in the window, or events of tasks held. */
  private hold(h: HeldEntry & { dues?: unknown[] }, until: number, dueBy: number, released: Set<HeldTask>): void {
    const submit = h.event === 'submitted';
    const ends = ENDS.has(h.event);
    const { ids, types } = h;
    for (let index = 0; index < ids.length; index++) {
      const id = ids[index];
      const key = types === undefined ? String(id) : `${String(types[index])}\u0000${String(id)}`;
      const task = this.tasks.get(key);
      if (!task) {
        if (!submit || Number(h.dues?.[index]) > dueBy) continue;
        this.tasks.set(key, { key, until, entry: h, index });
        markHeld(h, index);
      } else if (ends) {
        // NOTE: released in this pass: its end is written with the rest of this new entry.
        released.add(task);
      } else {
        (task.more ??= []).push(h, index);
        markHeld(h, index);
      }
    }
  }

  /** The entries to write: the new ones (without their tasks still held), then the released tasks' older ones. */
  private toWrite(read: HeldEntry[], released: Set<HeldTask>): EntryToWrite[] {
    const again: HeldEntry[] = [];
    const release = (h: HeldEntry, index: number): void => {
      h.held![index] = 0;
      h.holding--;
      if (h.resend === undefined) again.push(h);
      (h.resend ??= []).push(index);
    };
    for (const task of released) {
      this.tasks.delete(task.key);
      release(task.entry, task.index);
      const more = task.more ?? [];
      for (let i = 0; i < more.length; i += 2) release(more[i] as HeldEntry, more[i + 1] as number);
    }
    const out: EntryToWrite[] = [];
    const fresh = new Set(read);
    for (const h of again) {
      const resend = new Set(h.resend);
      h.resend = undefined;
      if (!fresh.has(h)) out.push({ held: h, only: mask(h.ids.length, (i) => resend.has(i)) });
    }
    for (const h of read) {
      if (h.holding === 0) out.push({ held: h, only: '' });
      else if (h.holding < h.ids.length) out.push({ held: h, only: mask(h.ids.length, (i) => h.held![i] === 0) });
    }
    // NOTE: in stream order (a released task's events in older entries come first).
    return again.length === 0 ? out : out.sort((a, b) => compareIds(a.held.entry[0], b.held.entry[0]));
  }

  /** Before the oldest held task's submit; the cursor when none is held. */
  private position(): string {
    const first = this.tasks.values().next();
    return first.done ? this.cursor! : first.value.entry.before;
  }
}

/** A string of `n` characters, '1' where `on(i)`, else '0'; '' when all are on (the whole entry). */
function mask(n: number, on: (i: number) => boolean): string {
  let out = '';
  let all = true;
  for (let i = 0; i < n; i++) {
    const yes = on(i);
    all &&= yes;
    out += yes ? '1' : '0';
  }
  return all ? '' : out;
}

/** Stream entry ids in order. */
function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-');
  const [bm, bs] = b.split('-');
  return am.length !== bm.length ? am.length - bm.length : am !== bm ? (am < bm ? -1 : 1) : Number(as) - Number(bs);
}
