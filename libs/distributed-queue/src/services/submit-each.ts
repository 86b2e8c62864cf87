import { SubmitIncompleteError } from '../errors';
import type { SubmitResult } from '../interfaces';
import type { DelayQueueStore, NewTask, TaskDedupe } from '../delay/delay-queue.store';
import { newRequestId } from '../runtime/request-id';

/**
 * Submits tasks one script call each, in order: a batch holding items with `dedupe` (each of those is a call
 * of dedupe-11.lua; the others a submit of one). `write` runs a call on the store (durable or not);
 * `submitted` counts the tasks created. A failure after the first call is a `SubmitIncompleteError` saying
 * which items were written.
 */
export async function submitEach(
  type: string,
  tasks: NewTask[],
  dedupes: (TaskDedupe | undefined)[],
  write: <T>(call: (store: DelayQueueStore) => Promise<T>) => Promise<T>,
  submitted: (created: number) => void,
): Promise<SubmitResult[]> {
  const results: SubmitResult[] = [];
  for (let i = 0; i < tasks.length; i++) {
    const task = tasks[i];
    const dedupe = dedupes[i];
    let result: SubmitResult;
    try {
      if (dedupe) {
        const { id, outcome } = await write((store) => store.dedupe(type, task, dedupe, newRequestId()));
        result = outcome === 'created' || outcome === 'exists' ? { id, created: outcome === 'created' } : { id, created: false, dedupe: outcome };
      } else {
        [result] = await write((store) => store.submit(type, [task], newRequestId()));
      }
    } catch (error) {
      if (i === 0) throw error;
      throw new SubmitIncompleteError(type, [...results, ...new Array<undefined>(tasks.length - i)], error);
    }
    if (result.created) submitted(1);
    results.push(result);
  }
  return results;
}
