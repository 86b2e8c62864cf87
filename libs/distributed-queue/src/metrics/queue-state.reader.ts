import type { LoggerService } from '@nestjs/common';
import type { TaskCounts, TypeLimits } from '../interfaces';
import { toError } from '../runtime/handler-call';
import { withTimeout } from '../runtime/with-timeout';
import { reportFailure } from '../redis/outage-log';

/** States counted by the `tasks` gauge. */
export const COUNTED_STATES = ['delayed', 'ready', 'running', 'dead', 'done'] as const;

/** What the gauges show, read from Redis at scrape time. */
export interface QueueStateSnapshot {
  /** Counts per known type. */
  tasks: { type: string; counts: TaskCounts }[];
  /** The fleet-wide limits of each known delay-queue type (`QueueControlService.getLimits`). */
  limits?: { type: string; limits: TypeLimits }[];
  /** The groups of each known delay-queue type: how many have waiting tasks, and the largest backlog (0: none). */
  groups?: { type: string; waiting: number; backlogMax: number }[];
  /** The route queue, when configured: its live machines, and this machine's partitions when it is one. */
  route?: { queue: string; machinesLive: number; machine?: string; partitionsOwned?: number };
  /** With the task history: entries of each event stream not yet copied into PostgreSQL. */
  history?: { stream: string; entries: number }[];
  /** Redis's memory per server (a cluster's masters); absent when INFO is refused. */
  memory?: { node: string; usedBytes: number; maxBytes: number }[];
  /** The schedules (distributed cron): next and last tick (epoch ms, null: none). */
  schedules?: { name: string; nextTickAt: number | null; lastTickAt: number | null }[];
}

/** How long a scrape waits for Redis before it shows the last values. */
export const SCRAPE_TIMEOUT_MS = 1000;

/**
 * Reads the queue state for one application's gauges: one read at a time (concurrent scrapes and the
 * gauges of one scrape share it), bounded by `SCRAPE_TIMEOUT_MS`; when Redis does not answer, the last
 * snapshot is returned and the outage is logged once (and its end once).
 */
export class QueueStateReader {
  private last?: QueueStateSnapshot;
  private inflight?: Promise<void>;
  private failing = false;

  constructor(
    private readonly load: () => Promise<QueueStateSnapshot>,
    private readonly logger: LoggerService,
    private readonly timeoutMs = SCRAPE_TIMEOUT_MS,
  ) {}

  /** The current snapshot, or the last one when Redis is slow or down (undefined before the first). */
  async read(): Promise<QueueStateSnapshot | undefined> {
    this.inflight ??= Promise.resolve()
      .then(this.load)
      .then((snapshot) => this.succeeded(snapshot), (error: unknown) => this.failed(error))
      .finally(() => (this.inflight = undefined));
    await withTimeout(this.inflight, this.timeoutMs, 'Redis').catch((error: unknown) => this.failed(error));
    return this.last;
  }

  private succeeded(snapshot: QueueStateSnapshot): void {
    this.last = snapshot;
    if (!this.failing) return;
    this.failing = false;
    this.logger.log('metrics: the queue state is readable again');
  }

  private failed(error: unknown): void {
    if (this.failing) return;
    this.failing = true;
    reportFailure(this.logger, 'metrics: reading the queue state', error, `metrics: reading the queue state failed (${toError(error).message}); the gauges keep their last values`);
  }
}
