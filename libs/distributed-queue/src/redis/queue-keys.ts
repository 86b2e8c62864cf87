/**
 * Key names of one task type. Every key carries the hash tag `{<prefix>:<type>}`, so all keys of a type
 * live in one Redis Cluster slot (each script touches one slot) and different types spread over shards.
 */
export interface DelayQueueKeys {
  /**
   * ZSET chunk tag -> the chunk's earliest due time (ms): the index of the waiting set (delayed and ready
   * tasks, FIFO at equal due times), kept in chunks of at most 128 tasks; see `scripts/includes/waiting-set.lua`.
   */
  waiting: string;
  /** ZSET `<seq tag><id>` -> due time (ms): one chunk of the waiting set (the tasks with seq in [c * 128, c * 128 + 127]). */
  waitingChunk(chunkTag: string): string;
  /** STRING: the number of waiting tasks. */
  waitingCount: string;
  /** ZSET `<seq tag><id>` -> due time: the waiting set as earlier versions kept it; takes move it into the chunks. */
  legacyWaiting: string;
  /** ZSET id -> lease deadline (ms): reserved (running) tasks. */
  active: string;
  /** HASH id -> record: `<seq tag><payload json>` until a run fails or is lost, then `~<attempts>:<seq>:<due>:<flags>:<payload json>`. */
  jobs: string;
  /** STRING counter: the submission sequence of the type (FIFO order at equal due times; generated ids `#<hex>`). */
  seq: string;
  /** HASH id -> `<stamp>:<attempt>:<due>:<host>/<pid>`: the reservation of each running task (the worker's token). */
  running: string;
  /** ZSET id -> time of death (ms): dead letters. */
  dead: string;
  /** HASH id -> last error (JSON) of retried and dead tasks. */
  errors: string;
  /** LIST of the last `keepDone` finished ids, newest first. */
  done: string;
  /** HASH dedupe key -> `<standing task id>:<window end ms>` (see scripts/delay/dedupe-11.lua). */
  dedupe: string;
  /** ZSET dedupe key -> when the sweep looks at it next: keys whose task ended and whose window passed go. */
  dedupeIndex: string;
  /** STRING with a TTL, while an instance waits on the type's tasks: the waiters' channel, where the scripts publish tasks' ends (see scripts/includes/awaiting.lua). */
  awaited: string;
  /** HASH id -> result (JSON, or `!<bytes>` not kept) of the finished ids in `done` (see scripts/includes/results.lua). */
  results: string;
  /** Pub/sub channel: `w:<ms until due>` wake-ups and `c:<id>` cancel requests. */
  events: string;
  /** STRING: exists while the type is paused (no task starts; submits and acks go on). */
  paused: string;
  /** STREAM of lifecycle events, capped (`events.streamMaxLen`): what fleet-scope listeners read. */
  log: string;
  /** STRING with a TTL, kept by the instances that follow `log`: while it exists, completions are logged too. */
  followed: string;
  /** STRING with a TTL, kept by the history writer: while it exists, submits and starts are logged too. */
  recorded: string;
  /** STRING with a TTL: the history writer copying `log` into PostgreSQL now (one instance at a time). */
  historyLock: string;
  /** ZSET consumer id -> live until (ms, Redis clock): the consumers of the type, refreshed by lease renewal. */
  consumers: string;
  /**
   * HASH, only for a type with a limit: its fleet-wide rate limit and concurrency (configured by the workers'
   * options, overridden by an operator) and the rate limit's state; see `scripts/includes/admission.lua`.
   */
  limits: string;
  /** STRING, one per consumer fetch lane (its last reserving take there, one lease): the reply for a repeated take. */
  lane(consumerLane: string): string;
  /**
   * HASH request id -> reply, one per bucket of request ids (`requestBucket`: one second of ids, kept 60 s
   * past its last write): the replies of submit and re-drive calls, for a repeated call.
   */
  requests(bucket: string): string;
}

/** Builds the keys of `type` under `prefix`. */
export function delayQueueKeys(prefix: string, type: string): DelayQueueKeys {
  const base = `${prefix}:{${prefix}:${type}}`;
  return {
    waiting: `${base}:wait`,
    waitingChunk: (chunkTag) => `${base}:wait:${chunkTag}`,
    waitingCount: `${base}:wait:n`,
    legacyWaiting: `${base}:waiting`,
    active: `${base}:active`,
    jobs: `${base}:jobs`,
    seq: `${base}:seq`,
    running: `${base}:running`,
    dead: `${base}:dead`,
    errors: `${base}:errors`,
    done: `${base}:done`,
    results: `${base}:results`,
    awaited: `${base}:log:aw`,
    dedupe: `${base}:dd`,
    dedupeIndex: `${base}:dd:i`,
    paused: `${base}:paused`,
    log: `${base}:log`,
    followed: `${base}:followed`,
    recorded: `${base}:recorded`,
    historyLock: `${base}:history-lock`,
    consumers: `${base}:consumers`,
    limits: `${base}:limits`,
    events: `${prefix}:events:${type}`,
    lane: (consumerLane) => `${base}:rq:${consumerLane}`,
    requests: (bucket) => `${base}:rb:${bucket}`,
  };
}
