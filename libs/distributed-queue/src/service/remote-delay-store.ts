import { DelayQueueStore, type Due, type NewTask } from '../delay/delay-queue.store';
import type { CancelResult } from '../interfaces';
import { PayloadTooLargeError, SubmitIncompleteError } from '../errors';
import { noRedis } from '../redis/no-redis';
import { splitBatches } from './split-batches';
import { DEFAULT_MAX_REQUEST_BYTES } from './request-body';
import type { SchedulerRpcClient } from './scheduler-rpc-client';

/** Room for a submit call's own fields (op, type, requestId) around its tasks. */
const CALL_OVERHEAD_BYTES = 4096;

/**
 * The delay queue of an application in service mode with `service.url`: submit, cancel, reschedule and a
 * task's state go to the scheduler, which runs the same scripts; everything else needs Redis and rejects
 * with `NoRedisConnectionError`. `TaskSubmitService` validates as always before calling it. A submit is
 * sent in calls of at most `maxRequestBytes` (`service.maxRequestBytes`) each.
 */
export class RemoteDelayQueueStore extends DelayQueueStore {
  constructor(
    private readonly rpc: SchedulerRpcClient,
    private readonly maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES,
  ) {
    super(noRedis(), 'remote');
  }

  /**
   * Submits in calls no larger than `maxRequestBytes` (the first under `requestId`, the next ones under
   * `<requestId>.<n>`, each repeatable as one call is).
   * @throws PayloadTooLargeError when one task alone makes a call too large (its payload, escaped into the call)
   * @throws SubmitIncompleteError when a call after the first fails: the results of the calls written before it
   */
  override async submit(type: string, tasks: NewTask[], requestId: string): Promise<{ id: string; created: boolean }[]> {
    const maxBytes = this.maxRequestBytes - CALL_OVERHEAD_BYTES;
    const sized = tasks.map((task) => ({ task, bytes: Buffer.byteLength(JSON.stringify(task)) }));
    const tooBig = sized.find((t) => t.bytes > maxBytes);
    if (tooBig) {
      const error = new PayloadTooLargeError(tooBig.bytes, maxBytes);
      error.message = `task "${tooBig.task.id}" takes ${tooBig.bytes} bytes in a call to the scheduler, more than service.maxRequestBytes allows (${maxBytes} after the call's own fields)`;
      throw error;
    }
    const results: { id: string; created: boolean }[] = [];
    const calls = splitBatches(sized, Number.MAX_SAFE_INTEGER, maxBytes);
    for (const [n, call] of calls.entries()) {
      const tasksOfCall = call.map((t) => t.task);
      let written: { id: string; created: boolean }[];
      try {
        written = await this.rpc.call<{ id: string; created: boolean }[]>({ op: 'submit', type, tasks: tasksOfCall, requestId: n === 0 ? requestId : `${requestId}.${n}` });
      } catch (error) {
        // NOTE: the earlier calls were written: a plain error would say nothing was, and a repeat of tasks
        // without ids would create them twice. Each call is all or nothing, as one call to Redis is.
        if (n === 0) throw error;
        throw new SubmitIncompleteError(type, [...results, ...new Array<undefined>(tasks.length - results.length)], error);
      }
      results.push(...written);
    }
    return results;
  }

  override cancel(type: string, id: string): Promise<CancelResult> {
    return this.rpc.call({ op: 'cancel', type, id });
  }

  override reschedule(type: string, id: string, due: Due): Promise<number | null> {
    return this.rpc.call({ op: 'reschedule', type, id, due });
  }

  override get(type: string, id: string): ReturnType<DelayQueueStore['get']> {
    return this.rpc.call({ op: 'get', type, id });
  }
}
