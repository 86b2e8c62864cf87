/** The shapes the delay queue's store takes and answers (see `DelayQueueStore`). */

/** A task of a listing page: its id, due time, record and, while running, the attempt it is on. */
export interface ListedTask {
  id: string;
  due: number | null;
  record: string | null;
  attempt: number | null;
}

/** When a task is due: `delay` ms after Redis's now, or at absolute epoch ms `at`. */
export type Due = { delay: number } | { at: number };

/** A task to add: its id ('' = generated in Redis), due time and its payload already serialised. */
export interface NewTask {
  id: string;
  due: Due;
  payload: string;
  /** 0 (most urgent) to 1000; undefined: the type's default (see `scripts/includes/priority.lua`). */
  priority?: number;
  /** Its group (see `scripts/includes/groups.lua`); undefined: none. */
  group?: string;
  /** Its deadline, absolute or from now on Redis's clock (see `scripts/includes/record.lua`); undefined: none. */
  deadline?: Due;
}

/** A submit's dedupe: its key, mode and window (see `scripts/delay/dedupe-11.lua`). */
export interface TaskDedupe {
  key: string;
  mode: 'drop' | 'extend' | 'replace' | 'debounce';
  /** 0: no window beyond the standing task's life. */
  ttlMs: number;
}

/** What a deduplicated submit did (see `scripts/delay/dedupe-11.lua`). */
export type DedupeOutcome = 'created' | 'exists' | 'dropped' | 'extended' | 'replaced' | 'debounced';

/** A reserved task as `take` returns it. */
export interface Reservation {
  id: string;
  attempt: number;
  /** Opaque reservation token: acks, renewals and failures carry it. */
  token: string;
  dueAt: number;
  payload: string;
}

/** What `take` returns. */
export interface TakeResult {
  /** Redis time of the call (ms). */
  now: number;
  /** ms until the next waiting task is due: 0 = look again now (the batch was full), -1 = nothing waits. */
  nextDueIn: number;
  /** Acks refused because the reservation had expired or moved on. */
  refused: string[];
  reserved: Reservation[];
}

/** Per-type tuning of `take`. */
export interface TakeOptions {
  count: number;
  leaseMs: number;
  maxAttempts: number;
  keepDone: number;
  recoverLimit: number;
}
