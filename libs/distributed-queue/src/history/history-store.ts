import type { TaskHistoryRecord } from './history-event';
import type { HistoryPage, HistorySearch } from './history-search';
import type { SkippedEvent } from './history-fold';
import type { StreamEntry } from '../events/stream-entry';

/** An entry of a batch, raw as read, and which of its tasks to write. */
export interface BatchEntry {
  entry: StreamEntry;
  /** '' for every task, else a character per task of its `ids`: '1' to write it ('0': held back meanwhile). */
  only: string;
}

/** A batch of one stream's entries for HistoryStore.applyEntries. */
export interface EntryBatch {
  /** The stream's key. */
  stream: string;
  /** The entries, in stream order. */
  entries: readonly BatchEntry[];
  /** The stream entry id to record as applied (the last entry's, or later). */
  position: string;
  /** The stream's type (a delay type's stream) and route partition, as decodeStreamEntry takes them. */
  from: { type?: string; partition?: number };
  /** Log lines of the batch's attempt ends, by task id (see history-logs.ts). */
  logs: ReadonlyMap<string, string>;
  /** The types the entries name (the stream's, and per task on a route partition's). */
  types: readonly string[];
  /** The handler timeout (ms) of a type (the `ttr_ms` column). */
  timeoutOf(type: string): number;
}

/** What the history writer and the history service need of the PostgreSQL store. */
export interface HistoryStore {
  /**
   * Writes a batch of raw entries (one row version per task) and records the stream's position, in one
   * transaction; returns the events left out as malformed.
   */
  applyEntries(batch: EntryBatch): Promise<SkippedEvent[]>;
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
