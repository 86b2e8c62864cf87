import { DistributedQueueError } from './distributed-queue.error';

/**
 * A durable call (the `durability` option) was applied on the Redis master, but fewer replicas than asked
 * acknowledged it within `timeoutMs` (`WAIT`): only `acknowledged` of `required`. Replication is
 * asynchronous, so a master that dies now can take the write with it at failover (it may survive, or not).
 * `result` is what the call returned (the ids written, the cancel's outcome...): the write is there on the
 * master now. Repeating the call with the same task ids is safe (an id that exists is not created twice);
 * a generated id here may be generated again after a failover that lost it.
 */
export class DurabilityError<R = unknown> extends DistributedQueueError {
  constructor(
    /** Replicas that acknowledged the write (the fewest of the nodes written, on a cluster). */
    readonly acknowledged: number,
    /** Replicas asked for (`durability.replicas`). */
    readonly required: number,
    /** How long the call waited for them (`durability.timeoutMs`). */
    readonly timeoutMs: number,
    /** What the call returned: its results as they were written on the master. */
    readonly result: R,
    /** Why replicas could not be asked, when that is the cause (the connection to the master was lost). */
    readonly reason?: string,
  ) {
    super(
      `Durability not confirmed: the write was applied on the Redis master, but only ${acknowledged} of ${required} replicas ` +
        `acknowledged it within ${timeoutMs} ms${reason ? ` (${reason})` : ''}: it may not survive a failover. Repeating the call with the same ids is safe`,
    );
  }
}
