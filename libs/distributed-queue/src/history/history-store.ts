import type { TaskHistoryRecord } from './history-event';
import type { HistoryPage, HistorySearch } from './history-search';
import type { TaskPatch } from './history-fold';

/** What the history writer and the history service need of the PostgreSQL store. */
export interface HistoryStore {
  /** Writes folded patches and records the stream's position, in one transaction. */
  applyPatches(stream: string, patches: readonly TaskPatch[], position: string): Promise<void>;
  /** The last entry id applied from `stream`, or null. */
  position(stream: string): Promise<string | null>;
  getHistory(type: string, id: string): Promise<TaskHistoryRecord | null>;
  search(query: HistorySearch): Promise<HistoryPage>;
  /** Deletes finished rows older than the cutoff, in batches; returns how many. */
  purgeFinishedBefore(cutoffMs: number): Promise<number>;
  close(): Promise<void>;
}

/** Injection token of the history store (null without the `history` option). */
export const HISTORY_STORE = Symbol('HISTORY_STORE');
