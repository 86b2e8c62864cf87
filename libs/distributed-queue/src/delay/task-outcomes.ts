import type { LoggerService } from '@nestjs/common';
import type { ResolvedWorkerOptions } from '../options/resolve-options';
import type { ConsumerEvents } from './consumer-events';
import type { ConsumerFlows } from './consumer-flows';
import type { DelayAcks } from './delay-acks';
import type { DelayQueueStore } from './delay-queue.store';
import type { DurableAcks } from './durable-acks';
import { recordFailedAttempt } from './failed-attempt';
import type { RunningTask } from './running-task';

/** What the consumer lends its outcomes: its count of tasks being settled, and what a freed slot does. */
export interface OutcomeSlots {
  /** A task is being settled (it still counts as busy). */
  hold(): void;
  /** It is settled. */
  release(): void;
  /** Its slot is free: look for work, tell those waiting for idle. */
  freed(): void;
}

/**
 * The end of a settled task of a delay-queue consumer: a success is acked with the next fetch (or by the
 * durable acks), after its last reports and, for a flow node, once its flow learnt it; a failure is recorded
 * (retried or dead-lettered). NOTE: a plain success is synchronous (no promise on the hot path).
 */
export class TaskOutcomes {
  constructor(
    private readonly type: string,
    private readonly store: DelayQueueStore,
    private readonly options: ResolvedWorkerOptions,
    private readonly events: ConsumerEvents,
    private readonly logger: LoggerService,
    private readonly acks: DelayAcks,
    private readonly durableAcks: DurableAcks | undefined,
    private readonly flows: ConsumerFlows | undefined,
    private readonly slots: OutcomeSlots,
  ) {}

  /** A success (the handler's `result`). */
  succeeded(task: RunningTask, result: unknown): void {
    if (this.flows?.is(task.reservation.id)) void this.completeNode(task, result);
    else this.ack(task, result);
  }

  /** A failure: its last reports first (the failure ends the reservation they are checked against). */
  async failed(task: RunningTask, error: Error): Promise<void> {
    this.slots.hold();
    try {
      if (task.reportsSent) await task.reportsSent;
      const outcome = await recordFailedAttempt(this.type, this.store, this.options, this.events, this.logger, task, error);
      if (outcome === 'dead' && this.flows?.is(task.reservation.id)) await this.flows.dead(task.reservation.id, error, task.reservation.attempt);
    } finally {
      this.slots.release();
      this.slots.freed();
    }
  }

  /** A flow node's success: its flow learns it before its ack (see `ConsumerFlows.completed`). */
  private async completeNode(task: RunningTask, result: unknown): Promise<void> {
    this.slots.hold();
    const refused = await this.flows!.completed(task.reservation.id, result);
    this.slots.release();
    if (refused) return this.failed(task, refused);
    if (refused === null) return this.ack(task, result);
    this.slots.freed();
  }

  /** Acked after its last reports when it made any (the ack ends the reservation they are checked against). */
  private ack(task: RunningTask, result: unknown): void {
    if (!task.reportsSent) return this.pushAck(task, result);
    this.slots.hold();
    void task.reportsSent.then(() => {
      this.slots.release();
      this.pushAck(task, result);
    });
  }

  private pushAck(task: RunningTask, result: unknown): void {
    if (this.durableAcks) this.durableAcks.push(task, result);
    else this.acks.push(task, result);
    this.slots.freed();
  }
}
