import type { ClusterNode, ClusterOptions, RedisOptions } from 'ioredis';
import type { FlowOptions } from './flow.interface';
import type { HistoryOptions } from './history-options.interface';
import type { MetricsOptions, TracingOptions } from './observability-options.interface';
import type { RouteQueueOptions } from './route-options.interface';
import type { ServiceClientOptions, ServiceSchedulerOptions } from './service-options.interface';
import type { EventsOptions } from './task-event.interface';
import type { TaskWorkerOptions } from './task-worker-options.interface';

/** A Redis Cluster: seed nodes and ioredis cluster options. */
export interface ClusterConnection {
  /** The seed nodes: one or more of the cluster's nodes (ioredis discovers the others). */
  cluster: ClusterNode[];
  /** ioredis options of the cluster client. */
  clusterOptions?: ClusterOptions;
}

/**
 * Where Redis is: a URL (`redis://user:pass@host:6379/0`, `rediss://...`), ioredis options (host/port,
 * or `sentinels` + `name` for Sentinel), or a cluster node list.
 */
export type RedisConnection = string | RedisOptions | ClusterConnection;

/**
 * Durable calls: each state-changing call of `TaskSubmitService` (submit, submitMany, submitOrdered,
 * submitOrderedMany, cancel, reschedule) resolves only once `replicas` replicas acknowledged its write
 * (Redis `WAIT`), so that a failover cannot lose what was acknowledged to the caller.
 */
export interface DurabilityOptions {
  /** Replicas that must acknowledge a write before the call resolves: an integer, at least 1. */
  replicas: number;
  /**
   * How long a call waits for them after its write; then it rejects with `DurabilityError` (the write is on
   * the master). Must be shorter than `redisTimeoutMs`. @default 1000
   */
  timeoutMs?: number;
}

/** Options of `DistributedQueueModule.forRoot`. */
export interface DistributedQueueModuleOptions {
  /** @default 'redis://127.0.0.1:6379' */
  connection?: RedisConnection;
  /** First part of every key; lets several applications share one Redis. @default 'dq' */
  keyPrefix?: string;
  /** false for producer-only applications: discover no workers, run nothing, only submit. @default true */
  workers?: boolean;
  /** On shutdown, in-flight tasks get this long to finish before they are handed back. @default 10000 */
  shutdownTimeoutMs?: number;
  /**
   * Every call to Redis settles within this many ms: a call made while the connection is down waits this
   * long for a reconnect, a sent call this long for its reply; then it rejects with `RedisUnavailableError`
   * (a call that never left is never sent later). At shutdown no call waits for a reconnect, and
   * `shutdownTimeoutMs` + 2 s after it began every connection is cut. @default 5000
   */
  redisTimeoutMs?: number;
  /**
   * Redis Cluster: a call whose slot is being migrated between nodes (resharding) waits for the migration's
   * end this long, then rejects with `RedisUnavailableError`. Redis answers TRYAGAIN to the library's calls
   * while their slot's keys are split between two nodes (the cluster is up: the call waits for the operator's
   * reshard, not for a silent server), so a type's calls wait for its slot's whole migration. Never less than
   * `redisTimeoutMs`. @default 60000
   */
  slotMigrationTimeoutMs?: number;
  /**
   * Start-up waits this long for Redis to be ready (ioredis retries meanwhile), then fails with
   * `RedisStartupError` naming the target and the last connection error. @default 10000
   */
  startupTimeoutMs?: number;
  /**
   * Start without Redis: start-up does not wait for it (`startupTimeoutMs` is not used) and the queues
   * (workers, route queue, cron, event followers, history writer, service mode) start in the background
   * once it answers. Until then the health indicator reports `startup` down, saying why, and calls reject
   * with `RedisUnavailableError` within `redisTimeoutMs`. @default false (start-up fails with
   * `RedisStartupError` when Redis is not ready within `startupTimeoutMs`)
   */
  waitForRedis?: boolean;
  /**
   * Start even when Redis's `maxmemory-policy` can evict keys (anything but `noeviction`). By default
   * start-up reads the policy of the server (every master of a cluster) and fails with
   * `RedisEvictionPolicyError`: an evicting Redis drops queued tasks without a word. When the server does not
   * let the policy be read (`INFO`), a warning says so and start-up goes on. @default false
   */
  allowEviction?: boolean;
  /**
   * Durable calls. Redis replicates asynchronously: a write acknowledged by a master that dies before its
   * replicas have it is lost at failover (Sentinel or Cluster). With this option, the calls of
   * `TaskSubmitService` that change state resolve only once `replicas` replicas acknowledged their write
   * (`WAIT`, on a connection of their own, `dq:<keyPrefix>:durable`: workers' takes and acks are never
   * blocked by it), and reject with `DurabilityError` when fewer did within `timeoutMs`. Generated ids are
   * then replicated before they are handed out (without it, an id generated in the last moments before a
   * failover can be generated again). Each call may ask otherwise (its `durability` option; `false`: not
   * this one). Costs a round trip to the replicas per call (calls in flight at once share one `WAIT`).
   * Not with `service.url` (no Redis there). @default none: calls resolve once the master applied them
   */
  durability?: DurabilityOptions;
  /** Worker options for every type. */
  defaults?: TaskWorkerOptions;
  /** Per-type worker options; also declares types a producer-only application may submit. */
  types?: Record<string, TaskWorkerOptions>;
  /** Refuse to submit types that have no worker here and are not in `types`. @default true */
  strictTypes?: boolean;
  /** Largest serialised payload accepted. @default 1048576 (1 MiB) */
  maxPayloadBytes?: number;
  /**
   * Largest serialised result (a delay-queue handler's return value, as JSON) kept with its finished task
   * (`getTask`, `completed` events, `submitAndWait`); a larger one is not kept: the task completes, and
   * readers get `ResultNotKeptError` naming its size. @default 65536 (64 KiB)
   */
  maxResultBytes?: number;
  /**
   * Largest progress value (`task.progress`, as JSON) a delay-queue handler may report; a larger one throws
   * `InvalidArgumentError` in the handler. @default 4096
   */
  maxProgressBytes?: number;
  /** What delay-queue tasks keep of their `task.log` lines (the oldest go first). */
  taskLogs?: TaskLogsOptions;
  /**
   * Finished task ids kept per type so that `getState` can answer 'done', with their results (`getTask`);
   * 0 keeps none. @default 1000
   */
  keepDone?: number;
  /** Flows (`TaskFlowService`): how long ended flows are kept, the size of node results. */
  flows?: FlowOptions;
  /** The route (ordered) queue; required when a worker is `ordered` or ordered tasks are submitted. */
  route?: RouteQueueOptions;
  /** Lifecycle event streams in Redis (what `@OnTaskEvent(..., { scope: 'fleet' })` listeners read). */
  events?: EventsOptions;
  /** Prometheus metrics (needs `prom-client`): true for the defaults. @default false */
  metrics?: boolean | MetricsOptions;
  /** OpenTelemetry spans (needs `@opentelemetry/api`): true for the defaults. @default false */
  tracing?: boolean | TracingOptions;
  /** The task history in PostgreSQL (needs `pg`): every task's life, kept after Redis forgot it. @default none */
  history?: HistoryOptions;
  /**
   * Handle the ticks of schedules (`TaskScheduleService`, `@DistributedCron`) in this instance: they need at
   * least one instance that does. @default true when the application has `@DistributedCron` methods
   */
  schedules?: boolean;
  /**
   * 'plugin': this application runs its workers. 'service': the scheduler runs them and calls this
   * application back over HTTP (needs `service`). 'scheduler': this process is that scheduler (needs
   * `scheduler`; what `apps/scheduler` runs). @default 'plugin'
   */
  mode?: 'plugin' | 'service' | 'scheduler';
  /** Client mode's options: with `mode: 'service'` only. */
  service?: ServiceClientOptions;
  /** The scheduler's options: with `mode: 'scheduler'` only. */
  scheduler?: ServiceSchedulerOptions;
}

/** Module option `taskLogs`: the bounds of each task's log (every attempt's lines together). */
export interface TaskLogsOptions {
  /** Lines kept per task, 1 to 10,000. @default 200 */
  maxLines?: number;
  /**
   * Bytes kept per task (the lines as stored, about 30 bytes each beyond their text), 1 KiB to 1 MiB. Each
   * report copies a task's log once in Redis: keep it small where tasks log often. @default 65536
   */
  maxBytes?: number;
}
