import { AckBuffer } from '../runtime/ack-buffer';
import { DEFAULT_MAX_RESULT_BYTES, resultText } from '../runtime/result-text';
import type { ConsumerEvents, Completion } from './consumer-events';
import type { Held } from './reserved-queue';
import type { RunningTask } from './running-task';

/** Acks drained for one call to Redis, with the completions they announce once that call's reply came. */
export interface AckBatch {
  held: Held[];
  completions: Completion[];
}

/**
 * The finished tasks of a delay-queue consumer whose acks wait to go out with its next call, and their
 * `completed` events: those are emitted only once the call that carried the acks has its reply (Redis has
 * them), never before. Failed calls put both back, in order. Completions are kept only while something
 * listens to them (no cost otherwise).
 */
export class DelayAcks {
  private readonly held = new AckBuffer<Held>();
  private readonly completions = new AckBuffer<Completion>();

  constructor(
    private readonly events: ConsumerEvents,
    /** Results larger than this are not kept (see `resultText`). */
    private readonly maxResultBytes = DEFAULT_MAX_RESULT_BYTES,
  ) {}

  /** A task that succeeded: its ack (carrying its result, see results.lua) is sent with the next call. */
  push(task: RunningTask, result: unknown): void {
    const text = resultText(result, this.maxResultBytes);
    this.held.push([task.reservation.id, text === undefined ? task.reservation.token : `${task.reservation.token}\n${text}`]);
    if (this.events.wants('completed')) this.completions.push({ task, result, finishedAt: Date.now() });
  }

  get size(): number {
    return this.held.size;
  }

  /** Takes every buffered ack (and its completion) for one call. */
  drain(): AckBatch {
    return { held: this.held.drain(), completions: this.completions.size > 0 ? this.completions.drain() : [] };
  }

  /** The call failed: its acks go back ahead of those buffered since. */
  restore(batch: AckBatch): void {
    this.held.restore(batch.held);
    this.completions.restore(batch.completions);
  }

  /**
   * Sends every buffered ack with `call` (one call to Redis): announced once it resolves, put back when
   * it rejects (and rethrown). Resolves with its reply.
   */
  async send<R extends { refused: string[] }>(call: (held: Held[]) => Promise<R>): Promise<R> {
    const batch = this.drain();
    try {
      const reply = await call(batch.held);
      this.sent(batch, reply.refused);
      return reply;
    } catch (error) {
      this.restore(batch);
      throw error;
    }
  }

  /** The call's reply came: Redis has the acks but `refused` (expired reservations): the rest are announced. */
  sent(batch: AckBatch, refused: string[]): void {
    if (batch.completions.length > 0) this.events.completed(batch.completions, refused);
  }
}
