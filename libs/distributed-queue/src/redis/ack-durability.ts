import type { LoggerService } from '@nestjs/common';
import { ACKS_CONFIRMED_AGAIN, ACKS_NOT_CONFIRMED } from '../distributed-queue.messages';
import type { ResolvedDurability } from '../options/resolve-durability';
import type { DurableWrites, WriteMark } from './durable-writes';

/**
 * Workers' acks under the module option `durability`, for both engines: an ack call runs on the durable
 * connection (`DurableWrites`: `WAIT` blocks the connection it is sent on, and the commands connection
 * carries every take and submit), then its completions wait for `policy.replicas` replicas (`WAIT`, shared
 * with the durable writes in flight: group commit). One per application.
 *
 * NOTE: an ack is the library's own write, made after the handler ran: when replicas do not confirm it
 * within `timeoutMs` there is no caller to reject. It stays applied on the master, its completions are
 * announced all the same (a worker never blocks on a replica), and one warning per outage says that a
 * failover now may run those tasks again; one line says when replicas confirm again. When the connection
 * to the master was lost after the write (the master died, a failover follows), the ack may be lost with
 * it and the task run again: its completion is not announced (if the ack survived, that event is lost, as
 * for a lost reply).
 */
export class AckDurability {
  /** Since when acks are not confirmed (epoch ms), while they are not. */
  private unconfirmedSince?: number;
  /** Ack calls not confirmed since then. */
  private unconfirmed = 0;

  constructor(
    readonly writes: DurableWrites,
    readonly policy: ResolvedDurability,
    private readonly logger: Pick<LoggerService, 'warn' | 'log'>,
  ) {}

  /** Runs one ack call (`key`'s node) on the durable connection; its write is marked as its reply arrives. */
  write<T>(key: string, call: () => Promise<T>): Promise<{ value: T; mark: WriteMark }> {
    return this.writes.write(key, call);
  }

  /**
   * Waits until `policy.replicas` replicas have the marked ack write, at most `policy.timeoutMs` (then
   * warned once per outage). Resolves with whether its completions are announced: false only when the
   * write cannot be confirmed any more (the connection to the master was lost since). Never rejects.
   */
  async confirm(mark: WriteMark): Promise<boolean> {
    const { acknowledged, reason } = await this.writes.confirm([mark], this.policy);
    if (acknowledged >= this.policy.replicas) {
      if (this.unconfirmedSince !== undefined) {
        this.logger.log(ACKS_CONFIRMED_AGAIN(Date.now() - this.unconfirmedSince, this.unconfirmed));
        this.unconfirmedSince = undefined;
        this.unconfirmed = 0;
      }
      return true;
    }
    this.unconfirmed++;
    if (this.unconfirmedSince === undefined) {
      this.unconfirmedSince = Date.now();
      this.logger.warn(ACKS_NOT_CONFIRMED(acknowledged, this.policy.replicas, this.policy.timeoutMs, reason));
    }
    // NOTE: `WAIT` answered (too few replicas): the ack is on the master. Any reason: the master may be gone.
    return reason === undefined;
  }
}
