/**
 * Key names of one task type. Every key carries the hash tag `{<prefix>:<type>}`, so all keys of a type
 * live in one Redis Cluster slot (each script touches one slot) and different types spread over shards.
 */
export interface DelayQueueKeys {
  /** ZSET id -> due time (ms): delayed and ready tasks. */
  waiting: string;
  /** ZSET id -> lease deadline (ms): reserved (running) tasks. */
  active: string;
  /** HASH id -> record: the bare payload JSON until a run fails or is lost, then `~<attempts>:0:<due>:<flags>:<payload json>`. */
  jobs: string;
  /** STRING counter of generated ids (`#<base 36>`). */
  seq: string;
  /** HASH id -> `<token>:<attempt>`: the reservation of each running task. */
  running: string;
  /** ZSET id -> time of death (ms): dead letters. */
  dead: string;
  /** HASH id -> last error (JSON) of retried and dead tasks. */
  errors: string;
  /** LIST of the last `keepDone` finished ids, newest first. */
  done: string;
  /** Pub/sub channel: `w:<ms until due>` wake-ups and `c:<id>` cancel requests. */
  events: string;
}

/** Builds the keys of `type` under `prefix`. */
export function delayQueueKeys(prefix: string, type: string): DelayQueueKeys {
  const base = `${prefix}:{${prefix}:${type}}`;
  return {
    waiting: `${base}:waiting`,
    active: `${base}:active`,
    jobs: `${base}:jobs`,
    seq: `${base}:seq`,
    running: `${base}:running`,
    dead: `${base}:dead`,
    errors: `${base}:errors`,
    done: `${base}:done`,
    events: `${prefix}:events:${type}`,
  };
}
