/** Options of `QueueControlService.purgeDead`. */
export interface PurgeDeadOptions {
  /** Delete only dead letters that died more than this many ms ago (Redis clock). @default 0 (all) */
  olderThanMs?: number;
}

/** Options of `QueueControlService.obliterate`. */
export interface ObliterateOptions {
  /** Obliterate even while workers of the queue are live (their running tasks' acks then find nothing). @default false */
  force?: boolean;
}
