import { DistributedQueueError } from './distributed-queue.error';

/**
 * A call to Redis did not settle: the connection was down for longer than `redisTimeoutMs` (the call was
 * never sent, nothing was written), or the server did not answer a sent call within that time (a paused or
 * partitioned server: the call may still be applied when the server answers again; a submit repeated with
 * the same task `id` is safe). Names the connection and its target, never its password.
 */
export class RedisUnavailableError extends DistributedQueueError {
  constructor(
    /** The library's name of the connection, e.g. `dq:orders:commands`. */
    readonly connection: string,
    /** Where it connects: `host:port`, the Sentinel master name or the cluster's seed nodes. */
    readonly target: string,
    /** The call was written to the server (its outcome is unknown) rather than never sent. */
    readonly sent: boolean,
    /** What happened: a timeout, or ioredis's connection error. */
    readonly reason: string,
  ) {
    super(`Redis unavailable (${connection} → ${target}): ${reason}`);
  }
}

/** Start-up could not reach Redis within `startupTimeoutMs`. Names the connection's target. */
export class RedisStartupError extends RedisUnavailableError {}

/**
 * A `submitMany` / `submitOrderedMany` goes to Redis in several calls (500 tasks per call; one per partition
 * for ordered tasks), each all or nothing; one of them failed after others were written. `results` is
 * aligned with the items: the result of each written item, undefined for each item not written. Repeat
 * the unwritten ones (or every item, with the same ids: a written id is not created again). `cause` is
 * the failure (typically `RedisUnavailableError`).
 */
export class SubmitIncompleteError<R = unknown> extends DistributedQueueError {
  constructor(
    /** The type of the submitted tasks. */
    readonly type: string,
    /** Per item: its result when it was written, undefined when it was not. */
    readonly results: (R | undefined)[],
    /** The failure of the call that was not written (typically `RedisUnavailableError`). */
    readonly cause: unknown,
  ) {
    const written = results.filter((r) => r !== undefined).length;
    super(`submit of ${results.length} "${type}" tasks incomplete: ${written} written, ${results.length - written} not (${cause instanceof Error ? cause.message : String(cause)})`);
  }
}
