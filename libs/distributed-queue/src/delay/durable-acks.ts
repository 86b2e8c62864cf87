import type { LoggerService } from '@nestjs/common';
import type { AckDurability } from '../redis/ack-durability';
import { reportFailure } from '../redis/outage-log';
import type { ConsumerEvents } from './consumer-events';
import { DelayAcks } from './delay-acks';
import type { TakeOptions } from './delay-queue.store';
import type { RunningTask } from './running-task';

/**
 * An ack call applied on a master whose connection was lost before its `WAIT` answered (see AckDurability).
 * NOTE: sent again on the new connection (after a failover, to the new master): an ack the failover lost is
 * applied then, and confirmed, before its lease expires; one that survived is refused (the reservation is
 * gone), so that completion is not announced (as for a lost reply). Either way the task is not run again
 * after an announcement.
 */
const UNCONFIRMABLE = new Error('the connection to the master was lost before the ack was confirmed');

/**
 * The acks of one delay-queue consumer under the module option `durability`: sent as ack-only takes
 * (count 0) on the durable connection, one call in flight at a time (what finishes meanwhile goes in the
 * next one), each followed by its `WAIT`; the completions are announced after it (`AckDurability`). The
 * consumer's takes then carry no acks.
 *
 * NOTE: not on the commands connection: a `WAIT` there, with a replica down, would hold every take and
 * submit of the application for up to `timeoutMs`. The acks needn't precede the next take either: a take
 * never returns a reserved task, acked or not.
 */
export class DurableAcks {
  private readonly acks: DelayAcks;
  private sending?: Promise<void>;
  private retryTimer?: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly type: string,
    private readonly durability: AckDurability,
    events: ConsumerEvents,
    /** The consumer's take options, with count 0: an ack-only call. */
    private readonly takeOptions: TakeOptions,
    /** The consumer's request key for ack-only calls (`<consumer id>.0`). */
    private readonly consumer: string,
    private readonly logger: LoggerService,
    /** How long to wait before sending again after a failed call (the consumer's error backoff). */
    private readonly backoffMs: number,
    maxResultBytes?: number,
  ) {
    this.acks = new DelayAcks(events, maxResultBytes);
  }

  /** How long a call's `WAIT` may take (`durability.timeoutMs`). */
  get timeoutMs(): number {
    return this.durability.policy.timeoutMs;
  }

  /** Acks not sent yet. */
  get size(): number {
    return this.acks.size;
  }

  /** A task that succeeded: its ack is sent now, or with the next call when one is in flight. */
  push(task: RunningTask, result: unknown): void {
    this.acks.push(task, result);
    this.kick();
  }

  /**
   * Sends every ack buffered, after the call in flight; resolves once they were confirmed (or not, within
   * `timeoutMs`) and announced. Rejects when a call failed (its acks are kept). For the consumer's stop.
   */
  async flush(): Promise<void> {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    while (this.sending || this.acks.size > 0) {
      if (this.sending) await this.sending;
      else await this.start(true);
    }
  }

  /** Stops retrying (the consumer stopped). */
  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
  }

  private kick(): void {
    if (this.sending || this.retryTimer || this.closed || this.acks.size === 0) return;
    void this.start(false);
  }

  /** Sends a call; the next one goes once it settled (what finished meanwhile). */
  private start(rethrow: boolean): Promise<void> {
    const call = this.send(rethrow);
    const settled = call.then(() => undefined, () => undefined);
    this.sending = settled;
    void settled.then(() => {
      this.sending = undefined;
      if (!rethrow) this.kick();
    });
    return call;
  }

  /** One ack-only take on the durable connection, then its `WAIT`, then the announcement. */
  private async send(rethrow: boolean): Promise<void> {
    const { store } = this.durability.writes;
    const key = store.keys(this.type).jobs;
    // NOTE: a `WAIT` in flight holds the durable connection: the batch grows until it is done.
    await this.durability.writes.idle();
    try {
      const { refused } = await this.acks.send(async (held) => {
        const { value, mark } = await this.durability.write(key, () => store.take(this.type, this.takeOptions, held, this.consumer, ''));
        if (!(await this.durability.confirm(mark))) throw UNCONFIRMABLE;
        return value;
      });
      if (refused.length > 0) this.logger.debug?.(`[${this.type}] ${refused.length} ack(s) refused: reservation expired`);
    } catch (error) {
      if (rethrow) throw error;
      if (error !== UNCONFIRMABLE) reportFailure(this.logger, `[${this.type}] ack`, error, `[${this.type}] ack failed, retrying: ${(error as Error).message}`);
      if (!this.closed) this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.kick();
      }, this.backoffMs);
    }
  }
}
