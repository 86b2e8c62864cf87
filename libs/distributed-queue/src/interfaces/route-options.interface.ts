/** What a full partition does with a new task. */
export type RejectStrategy = 'Discard' | 'DiscardOldest' | 'Exception';

/**
 * The route (ordered) queue: tasks with an ordering key run one after another per key, in submission
 * order; keys spread over `partitions` partitions, each owned by one live machine at a time. Names follow
 * seed 000 (`queue.qId`, `queue.num`, `max.size`, ...).
 */
export interface RouteQueueOptions {
  /** Namespace and hash tag of the queue (seed: qId). Required; keep it short. */
  qId: string;
  /** Partition count (seed: num). May grow between deployments; shrinking is refused. @default 8 */
  partitions?: number;
  /** Waiting tasks per partition before `rejectStrategy` applies (seed: max.size). @default 50000 */
  maxPartitionSize?: number;
  /** @default 'Discard' */
  rejectStrategy?: RejectStrategy;
  /**
   * This instance's identity; an instance restarted with the same id resumes its partitions. Two live
   * instances must never share one. @default `<hostname>:<pid>:<6 random hex digits>` (new at every start)
   */
  machineId?: string;
  /** Heartbeat period: renews this machine and the leases of its partitions. @default 5000 */
  heartbeatMs?: number;
  /** A machine without a heartbeat for this long is evicted (seed: machine.offLineMillisecond). @default 150000 */
  offlineMs?: number;
  /** A partition whose owner did not renew it for this long is reassigned (seed: idle.Millisecond); at least offlineMs. @default 300000 */
  idleMs?: number;
  /** Scheduler period: evict, assign, rebalance (one machine at a time, under a lock). @default 10000 */
  rebalanceMs?: number;
  /** Items a partition owner takes per call; keys in one batch run in parallel, each in order. @default 100 */
  batchSize?: number;
  /** Keys run at once within one partition's batch. @default 32 */
  keyConcurrency?: number;
  /** Dead letters kept per partition. @default 10000 */
  maxDeadLetters?: number;
  /** Log every scheduling script call in the Redis log (seed: lua.log). @default false */
  luaLog?: boolean;
}
