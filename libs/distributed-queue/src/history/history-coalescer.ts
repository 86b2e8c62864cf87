import type { DecodedEntry } from './history-decode';
import type { HistoryEvent } from './history-event';
import { historyEventProblem, isFinished, patchKey, stepPatch, type TaskPatch } from './history-fold';

/** At most this many tasks per stream are held back in memory; past it the oldest are written. */
export const MAX_HELD_TASKS = 50_000;

interface Held {
  key: string;
  patch: TaskPatch;
  /** The entry before the one that submitted the task: reading again from here finds the whole task. */
  before: string;
  /** performance.now() past which the task's row is written even if it has not finished. */
  until: number;
}

/** What a pass writes: the rows, and the stream position to record with them. */
export interface CopyPlan {
  patches: TaskPatch[];
  position: string;
  /** Events skipped as malformed, with why. */
  skipped: { event: HistoryEvent; problem: string }[];
}

/**
 * One stream's copy state in the history writer: the last entry read, and the tasks held back.
 *
 * A task submitted less than `coalesceMs` ago that has not finished is held in memory instead of written,
 * so that a task that ends soon after its submit is written once (one row version instead of two or three:
 * PostgreSQL's cost per task halves). The position recorded in PostgreSQL stays before the oldest held
 * task's submit, so a writer that dies (or loses its lease) loses nothing: the next one reads those entries
 * again, and the rows written meanwhile ignore what they already hold (the upsert only moves forward).
 */
export class StreamCopyState {
  /** The last entry read (undefined: start from the recorded position). */
  cursor?: string;
  private held = new Map<string, Held>();

  /** @param maxHeld tasks held at most (past it the oldest are written) */
  constructor(private readonly maxHeld = MAX_HELD_TASKS) {}

  /** Tasks held back now. */
  get holding(): number {
    return this.held.size;
  }

  /** Forgets what was read and held (after a failure or a lost lease: the next pass starts from PostgreSQL's position). */
  reset(): void {
    this.cursor = undefined;
    this.held.clear();
  }

  /**
   * Folds `entries` (read after the cursor, decoded: see decodeEntries) into the held tasks and splits them:
   * rows to write now (finished tasks, tasks not submitted in the window, tasks held past `coalesceMs`, all of
   * them when `force`), and the rest held. Moves the cursor past the entries.
   */
  plan(entries: readonly DecodedEntry[], coalesceMs: number, force: boolean): CopyPlan {
    const now = performance.now();
    const { held } = this;
    const skipped: CopyPlan['skipped'] = [];
    const patches: TaskPatch[] = [];
    const touched = new Set<Held>();
    let before = this.cursor ?? '0-0';
    for (const entry of entries) {
      for (const event of entry.events) {
        const problem = historyEventProblem(event);
        if (problem) {
          skipped.push({ event, problem });
          continue;
        }
        const key = patchKey(event);
        let h = held.get(key);
        if (h) h.patch = stepPatch(h.patch, event);
        else held.set(key, (h = { key, patch: stepPatch(undefined, event), before, until: now + coalesceMs }));
        touched.add(h);
      }
      before = entry.entryId;
    }
    this.cursor = before;
    const release = (h: Held): void => {
      held.delete(h.key);
      patches.push(h.patch);
    };
    for (const h of touched) if (force || !h.patch.submitted || isFinished(h.patch.status)) release(h);
    // NOTE: tasks are held in the order they were first read, so their deadlines and `before` only grow
    // along the map: the expired ones, and the oldest past the cap, are at its front.
    for (const h of held.values()) {
      if (!force && h.until > now && held.size <= this.maxHeld) break;
      release(h);
    }
    const first = held.values().next();
    return { patches, position: first.done ? this.cursor : first.value.before, skipped };
  }
}
