/** Options of `QueueControlService.purgeDead`. */
export interface PurgeDeadOptions {
  /** Delete the dead letters that died this many ms ago or earlier (Redis clock). @default 0 (all of them) */
  olderThanMs?: number;
}

/** Options of `QueueControlService.obliterate`. */
export interface ObliterateOptions {
  /** Obliterate even while workers of the queue are live (their running tasks' acks then find nothing). @default false */
  force?: boolean;
}
