/**
 * Client mode (`mode: 'service'`): the scheduler (`apps/scheduler`) runs this application's delay-queue
 * tasks and calls it back over HTTP; the application runs no consumers and no queue timers.
 */
export interface ServiceClientOptions {
  /** This application's name in the registry: it owns the types of its `@TaskWorker`s. */
  appName: string;
  /** The secret shared with the scheduler: each delivery carries an HMAC made with it. At least 16 characters. */
  secret: string;
  /** Base URL at which the scheduler reaches this instance, e.g. `http://10.0.0.7:3000`. */
  publicUrl: string;
  /** Path of the callback (after any global prefix you set, which it must then include). @default '/dq/deliveries' */
  callbackPath?: string;
  /** How often this instance renews its registration. @default 5000 */
  heartbeatMs?: number;
  /** An instance not renewed for this long gets no more deliveries. @default 3 × heartbeatMs */
  instanceTtlMs?: number;
  /** This instance's id in the registry. @default `<hostname>-<pid>-<random>` */
  instanceId?: string;
  /**
   * The scheduler's base URL (e.g. `http://scheduler:4000`): the application then opens no Redis connection
   * at all (leave `connection` out) and registers, submits, cancels, reschedules and reads task states
   * through the scheduler. Without it, it uses `connection` (the scheduler's Redis and keyPrefix). @default none
   */
  url?: string;
  /** With `url`: the path where the scheduler answers its applications (its `clientPath`). @default '/dq/service' */
  schedulerPath?: string;
  /**
   * The largest request body (bytes) this instance's callback takes, whatever body parser the application
   * sets (with Express; see the README). It is registered with the types: the scheduler splits its
   * deliveries so that none is larger. With `url`, the application's calls to the scheduler are split to stay
   * within it too (the scheduler's `maxRequestBytes` must be at least as large). At least
   * `maxPayloadBytes` + 64 KiB, so that any task that can be submitted fits in one request.
   * @default the larger of 4 MiB and `maxPayloadBytes` + 64 KiB
   */
  maxRequestBytes?: number;
}

/**
 * Scheduler mode (`mode: 'scheduler'`, what `apps/scheduler` runs): delivers the due tasks of every
 * registered application to its live instances.
 */
export interface ServiceSchedulerOptions {
  /** The secret shared with the applications (at least 16 characters). */
  secret: string;
  /** The registry is read again this often, besides on every change message. @default 1000 */
  syncIntervalMs?: number;
  /** Time past a type's `timeoutMs` before an unanswered delivery counts as failed. @default 2000 */
  deliveryGraceMs?: number;
  /** Lease of a delivery: a SIGKILLed replica's deliveries are redone by another after this long. @default 30000 */
  visibilityTimeoutMs?: number;
  /** Where applications without Redis (`service.url`) send their calls. @default '/dq/service' */
  clientPath?: string;
  /**
   * The largest call body (bytes) taken at `clientPath`, whatever body parser the application sets (with
   * Express). At least `maxPayloadBytes` + 64 KiB. @default the larger of 4 MiB and `maxPayloadBytes` + 64 KiB
   */
  maxRequestBytes?: number;
}
