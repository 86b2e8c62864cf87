import type { LoggerService } from '@nestjs/common';
import { ROUTE_ACK_PARTIAL } from '../distributed-queue.messages';
import type { RouteAckOutcome } from '../redis/script-outcome';
import type { TaskEventBus } from '../events/task-event-bus';
import type { TaskEvent } from '../interfaces/task-event.interface';
import { ACK_DELAY_MS, AckBuffer } from '../runtime/ack-buffer';
import type { AckDurability } from '../redis/ack-durability';
import type { AttemptRecord, RouteStore } from './route.store';

/** A task that finished: acked (no error) or to bury (its error json). */
export interface Settled {
  seq: number;
  error?: string;
  /** When its last attempt started (epoch ms), for the history. */
  startedAt?: number;
  /** Its last attempt's number (1 when absent), for the history. */
  attempt?: number;
  /** The error of the attempt before the last, when that one failed (a retry), for the history. */
  retried?: { name: string; message: string; stack?: string };
  /** Its local `completed` or `dead` event (when something listens): emitted once Redis has the ack. */
  event?: TaskEvent;
}

/** What the history gets of a finished task's last attempt (see AttemptRecord). */
function attemptRecord(s: Settled, startedAt: number): AttemptRecord {
  const attempt = s.attempt ?? 1;
  if (s.retried) {
    const { name, message, stack } = s.retried;
    return stack ? [startedAt, attempt, name, message, stack] : [startedAt, attempt, name, message];
  }
  return attempt === 1 ? startedAt : [startedAt, attempt];
}

/**
 * The acks of one partition runner. Finished tasks go out in batches, one call in flight at a time, at most
 * `ACK_DELAY_MS` after they finished while their batch runs on; the last ones of a batch go out just ahead
 * of the next take, in the same round trip. Every call is fenced by (machine, epoch). The local events of
 * the tasks a call acks are emitted once its reply says Redis has them; never for acks refused (fenced:
 * the partition's next owner runs those tasks again), not sent, or partly found (see `logger`).
 */
export class PartitionAcks {
  private readonly finished = new AckBuffer<Settled>();
  private flushing?: Promise<void>;
  private timer?: NodeJS.Timeout;
  /** With durability: the announcements of calls applied, each after its `WAIT` and the one before. */
  private confirming: Promise<unknown> = Promise.resolve();

  /** @param onFenced called when Redis refused the acks: the partition is not this runner's any more. */
  constructor(
    private readonly store: RouteStore,
    private readonly partition: number,
    private readonly me: string,
    private readonly epoch: number,
    private readonly onFenced: () => void,
    private readonly events?: TaskEventBus,
    /**
     * The module option `durability`: calls go on the durable connection, events wait for replicas.
     * NOTE: not on the runner's connection: a `WAIT` there (this runner's or any other's) would hold every
     * take, renewal and submit of the application up to `timeoutMs` with a replica down, and heartbeats late
     * by that long lose partitions. The runner's take then no longer follows the acks in Redis by being sent
     * right after them: it is sent once their reply came (a round trip more per batch; with a replica down,
     * up to `timeoutMs` behind a `WAIT` in flight: bounded). It does not wait for the `WAIT`: only the
     * events do.
     */
    readonly durable?: AckDurability,
    /**
     * Told (debug) when a call's reply said some of its tasks were not in flight (a failover lost the take
     * that handed them out, or an earlier call acked them): none of its events is announced, since those
     * tasks still waiting run again (a task that was done loses its event, as for a lost reply).
     */
    private readonly logger?: Pick<LoggerService, 'debug'>,
  ) {}

  /** Finished tasks not sent yet. */
  get size(): number {
    return this.finished.size;
  }

  /** Records a finished task; it is sent within `ACK_DELAY_MS`. */
  add(settled: Settled): void {
    this.finished.push(settled);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, ACK_DELAY_MS).unref();
  }

  /** True while a call is in flight. */
  get busy(): boolean {
    return this.flushing !== undefined;
  }

  /** Resolves when no call is in flight, so that a `flush()` made next is sent at once. */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing.catch(() => undefined);
  }

  /**
   * Sends everything finished so far (after the call in flight, if any); resolves once it is all in Redis.
   * When a call fails its tasks are kept for the next one, and the promise rejects.
   * NOTE: with no call in flight the command is dispatched synchronously: a take sent right after it on the
   * same connection runs after it in Redis.
   */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    if (this.finished.size === 0) return Promise.resolve();
    const items = this.finished.drain();
    const acks: number[] = [];
    const dead: [number, string][] = [];
    const starts = new Map<number, AttemptRecord>();
    for (const s of items) {
      if (s.error === undefined) acks.push(s.seq);
      else dead.push([s.seq, s.error]);
      if (s.startedAt !== undefined) starts.set(s.seq, attemptRecord(s, s.startedAt));
    }
    let sent = false;
    const call = this.durable ? this.ackDurably(this.durable, items, acks, dead, starts) : this.store.ack(this.partition, this.me, this.epoch, acks, dead, starts);
    this.flushing = call
      .then(
        (outcome) => {
          sent = true;
          if (outcome === 'fenced') this.onFenced();
          else if (outcome === 'partial') this.logger?.debug?.(ROUTE_ACK_PARTIAL(this.partition, items.length));
          else if (!this.durable) this.announce(items);
        },
        (error: unknown) => {
          this.finished.restore(items);
          throw error;
        },
      )
      .finally(() => {
        this.flushing = undefined;
        // NOTE: what finished while this call was in flight goes in the next one.
        if (sent && this.finished.size > 0) this.kick();
      });
    return this.flushing;
  }

  /** Resolves once the calls applied so far are confirmed (or not, within `timeoutMs`) and announced. */
  confirmed(): Promise<unknown> {
    return this.confirming;
  }

  /**
   * One call on the durable connection (a `WAIT` blocks the connection it is sent on); resolves once
   * applied, its events once replicas have it (`AckDurability`: or not within `timeoutMs`), in order.
   */
  private async ackDurably(durable: AckDurability, items: Settled[], acks: number[], dead: [number, string][], starts: Map<number, AttemptRecord>): Promise<RouteAckOutcome> {
    const store = durable.writes.routeStore!;
    const key = store.keys.partition(this.partition).own;
    const { value: outcome, mark } = await durable.write(key, () => store.ack(this.partition, this.me, this.epoch, acks, dead, starts));
    // NOTE: a call not confirmable (the connection lost: a failover) is not sent again, unlike the delay
    // engine's: the take sent after it may already run on the new master, replaying the items it lost.
    if (outcome === 'ok') this.confirming = Promise.all([this.confirming, durable.confirm(mark)]).then(([, announce]) => announce && this.announce(items));
    return outcome;
  }

  /** Emits the events of acked tasks, timed now (their duration ends when their handler did). */
  private announce(items: Settled[]): void {
    const bus = this.events;
    if (!bus) return;
    let at = 0;
    for (const { event } of items) {
      if (!event) continue;
      event.at = at ||= Date.now();
      bus.emit(event);
    }
  }

  /** Stops the delay timer (the runner ended). */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Starts a send unless one is in flight; a failure is retried by the next timer or by the batch's end. */
  private kick(): void {
    if (this.flushing || this.finished.size === 0) return;
    this.flush().catch(() => undefined);
  }
}
