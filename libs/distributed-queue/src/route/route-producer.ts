import type { LoggerService } from '@nestjs/common';
import { PartitionFullError, RouteQueueLostError, SubmitIncompleteError } from '../errors';
import type { OrderedSubmitResult } from '../interfaces';
import { partitionOf } from './route-keys';
import { newRequestId } from '../runtime/request-id';
import type { PushResult, RouteStore } from './route.store';
import { recreateIfLost } from './route-topology';

/** Attempts when a partition's count changed under the producer (a resize in progress). */
const STALE_RETRIES = 20;

/**
 * Encodes an ordered task as stored after its seq and time: `{"id","type","key","payload"}`, with `"tc"`
 * (the W3C traceparent it was submitted under) when there is one.
 */
export function encodeRouteItem(id: string, type: string, key: string, payloadJson: string, traceContext?: string): string {
  const tc = traceContext ? `,"tc":${JSON.stringify(traceContext)}` : '';
  return `{"id":${JSON.stringify(id)},"type":${JSON.stringify(type)},"key":${JSON.stringify(key)},"payload":${payloadJson}${tc}}`;
}

/**
 * The move of a due delayed ordered task into its partition, named after the task (its id and submission time):
 * the mover run again after a crash (its lease expired before its ack) repeats the same call, which the
 * partition answers from its request key (kept `ttlMs`, past the mover's lease) without appending twice.
 */
export interface MoveCall {
  requestId: string;
  ttlMs: number;
}

/**
 * The payload of a delayed ordered task while it waits in the delay queue (type `__route__.<qId>`): its key,
 * its encoded item, and when it was submitted (ms; names its move, see `MoveCall`; absent from tasks an
 * earlier version submitted).
 */
export interface MoverPayload {
  key: string;
  item: string;
  at?: number;
}

/** An ordered task ready to push. */
export interface RouteEntry {
  key: string;
  id: string;
  item: string;
}

function outcomeOf(id: string, partition: number, { outcome, dropped }: PushResult): OrderedSubmitResult {
  const result: OrderedSubmitResult = { id, partition, outcome };
  if (dropped !== undefined) result.droppedId = (JSON.parse(dropped) as { id: string }).id;
  return result;
}

/** Waits for every call to settle (none is left running unseen); then `onError` gets the first failure. */
async function settleAll(calls: Promise<void>[], onError: (error: unknown) => never): Promise<void> {
  const outcomes = await Promise.allSettled(calls);
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) onError(failed.reason);
}

/** Pushes ordered tasks to the partition of their key, following the partition count Redis holds. */
export class RouteProducer {
  private partitions?: number;
  private repairing?: Promise<boolean>;

  constructor(
    private readonly store: RouteStore,
    private readonly logger: Pick<LoggerService, 'warn'>,
  ) {}

  /**
   * The partition count Redis holds (cached). None: the queue's records were lost (Redis restarted empty or
   * was flushed): they are re-created (one repair at a time) rather than refusing every submit until a
   * machine notices.
   */
  private async count(): Promise<number> {
    if (this.partitions) return this.partitions;
    let n = await this.store.partitionCount();
    if (n === 0) {
      this.repairing ??= recreateIfLost(this.store, this.logger).finally(() => (this.repairing = undefined));
      await this.repairing;
      n = await this.store.partitionCount();
    }
    if (n === 0) throw new RouteQueueLostError(this.store.options.qId);
    return (this.partitions = n);
  }

  /**
   * The partitions `keys` map to under the partition count Redis holds (a delayed task's answer: it enters
   * that partition when due, unless the count grows meanwhile); the configured count while the queue is not
   * initialised yet (its first machine writes that count).
   */
  async partitionsOf(keys: string[]): Promise<number[]> {
    const n = (this.partitions ??= (await this.store.partitionCount()) || undefined) ?? this.store.options.partitions;
    return keys.map((key) => partitionOf(key, n));
  }

  /**
   * Moves a due delayed ordered task into its partition, as the call `move` names (`written`: see
   * `pushMany`). Its submit was answered long ago: a full partition that does not take it (Exception or
   * Discard) fails the move, which the mover retries.
   * @throws PartitionFullError when its partition is full and did not take it
   */
  async enter(entry: RouteEntry, move: MoveCall, written?: (partition: number) => void): Promise<OrderedSubmitResult> {
    const [result] = await this.pushMany([entry], true, written, move);
    if (result.outcome === 'rejected' || result.outcome === 'discarded') throw new PartitionFullError(result.partition, this.store.options.maxPartitionSize);
    return result;
  }

  /**
   * Pushes many tasks with one script call per partition (order kept within each key). Under the
   * Exception strategy the tasks after a full point come back 'rejected'. `written` is told each
   * partition written, as its call's reply arrives (durable writes note where it was applied).
   */
  async pushMany(entries: RouteEntry[], entering = false, written?: (partition: number) => void, move?: MoveCall): Promise<OrderedSubmitResult[]> {
    const results: OrderedSubmitResult[] = new Array(entries.length);
    let todo = entries.map((_, i) => i);
    for (let attempt = 0; attempt < STALE_RETRIES && todo.length > 0; attempt++) {
      const n = await this.count();
      const groups = new Map<number, number[]>();
      for (const i of todo) {
        const p = partitionOf(entries[i].key, n);
        const group = groups.get(p);
        if (group) group.push(i);
        else groups.set(p, [i]);
      }
      const stale: number[] = [];
      await settleAll(
        [...groups].map(async ([partition, indexes]) => {
          // NOTE: one request id per call: ioredis re-sending the call after a reconnect appends nothing twice.
          const replies = await this.store.push(partition, n, indexes.map((i) => entries[i].item), move?.requestId ?? newRequestId(), entering, move?.ttlMs);
          written?.(partition);
          if (replies === 'stale-count') {
            stale.push(...indexes);
            return;
          }
          indexes.forEach((i, j) => (results[i] = outcomeOf(entries[i].id, partition, replies[j])));
        }),
        (error) => {
          // NOTE: each partition's call is all or nothing; say which items the others wrote.
          if (results.some((r) => r !== undefined)) throw new SubmitIncompleteError(`route queue ${this.store.options.qId}`, [...results], error);
          throw error;
        },
      );
      if (stale.length > 0) {
        // NOTE: a resize is in progress: re-read the count; retry in the original order.
        this.partitions = undefined;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      todo = stale.sort((a, b) => a - b);
    }
    if (todo.length > 0) throw new Error(`Route queue "${this.store.options.qId}": partition count kept changing while submitting`);
    return results;
  }
}
