import { routeDelayType } from '../distributed-queue.constants';
import type { DelayQueueStore, ListedTask } from '../delay/delay-queue.store';
import { decodeRecord } from '../delay/task-codec';
import type { WaitingCursor } from '../delay/waiting-page';
import type { OrderedDeadTask, TaskInfo } from '../interfaces';
import type { PartitionHolding, RouteControlStore } from './route-control.store';
import { partitionOf } from './route-keys';
import { decodeRouteItem, type RouteItem } from './route.store';

/** States an ordered type's listing knows: the route queue keeps no finished tasks. */
export type OrderedListState = PartitionHolding | 'delayed';

/** The part `start..stop` of one partition that a page takes. */
export interface PartitionSlice {
  partition: number;
  start: number;
  stop: number;
}

/**
 * Which parts of which partitions make the page `offset, limit` of the partitions taken one after the
 * other in partition order, given their lengths: O(partitions), whatever the offset.
 */
export function pageSlices(lengths: number[], offset: number, limit: number): PartitionSlice[] {
  const slices: PartitionSlice[] = [];
  let skip = offset;
  let left = limit;
  for (let partition = 0; partition < lengths.length && left > 0; partition++) {
    if (skip >= lengths[partition]) {
      skip -= lengths[partition];
      continue;
    }
    const take = Math.min(left, lengths[partition] - skip);
    slices.push({ partition, start: skip, stop: skip + take - 1 });
    left -= take;
    skip = 0;
  }
  return slices;
}

function parseJson(json: string | undefined): unknown {
  try {
    return json === undefined ? undefined : JSON.parse(json);
  } catch {
    return undefined;
  }
}

/** A route dead letter `{ item, diedAt, error }` with its task decoded (null when unreadable). */
export function decodeDeadLetter(entry: string): { task: RouteItem | null; item: string; diedAt: number; error: OrderedDeadTask['error'] } {
  const letter = (parseJson(entry) ?? {}) as Partial<{ item: string; diedAt: number; error: OrderedDeadTask['error'] }>;
  const item = typeof letter.item === 'string' ? letter.item : entry;
  return {
    task: decodeRouteItem(item),
    item,
    diedAt: Number(letter.diedAt ?? 0),
    error: letter.error ?? { name: 'Error', message: 'unreadable dead letter' },
  };
}

/** An entry of a partition as a TaskInfo: its own type, key and partition. */
function entryInfo(entry: string, state: PartitionHolding, partition: number): TaskInfo {
  if (state === 'dead') {
    const { task, diedAt, error } = decodeDeadLetter(entry);
    const attempts = error.attempts ?? 0;
    return {
      id: task?.id ?? '', type: task?.type ?? '', state, key: task?.key, partition, attempts, payload: task?.payload,
      lastError: { name: error.name, message: error.message, attempts, failedAt: diedAt, ...(typeof error.stack === 'string' && { stack: error.stack }) },
    };
  }
  const task = decodeRouteItem(entry);
  if (!task) return { id: '', type: '', state, partition };
  return { id: task.id, type: task.type, state, key: task.key, partition, dueAt: task.at, payload: task.payload };
}

/** A delayed ordered task (a record of the internal delay type: `{ key, item }`) as a TaskInfo. */
function delayedInfo(row: ListedTask, partitions: number): TaskInfo {
  const record = row.record ? decodeRecord(row.record, row.due ?? 0) : null;
  const wrapped = (parseJson(record?.payload) ?? {}) as { key?: string; item?: string };
  const task = (parseJson(wrapped.item) ?? {}) as { type?: string; key?: string; payload?: unknown };
  const key = task.key ?? wrapped.key;
  const info: TaskInfo = { id: row.id, type: task.type ?? '', state: 'delayed', key, dueAt: record?.dueAt ?? row.due ?? undefined };
  if (key !== undefined) info.partition = partitionOf(key, partitions);
  if (record) info.attempts = record.attempts;
  if ('payload' in task) info.payload = task.payload;
  return info;
}

/**
 * One page of the route queue's delayed tasks by due time (those due now, about to enter, come first):
 * the internal delay type's waiting set read in bounded steps (see delay/waiting-page.ts).
 */
async function listDelayed(control: RouteControlStore, delay: DelayQueueStore, offset: number, limit: number): Promise<TaskInfo[]> {
  const type = routeDelayType(control.route.options.qId);
  const [rows, partitions] = await Promise.all([delay.list(type, 'all', offset, limit), control.partitions()]);
  return rows.map((row) => delayedInfo(row, partitions));
}

/**
 * The route queue's delayed tasks after a cursor (null: from the start), by due time, read in bounded
 * steps like `listDelayed`, each with its cursor position (`due`, `seq`) for the next page.
 */
export async function listOrderedDelayedAfter(
  control: RouteControlStore, delay: DelayQueueStore, after: WaitingCursor | null, limit: number,
): Promise<{ task: TaskInfo; at: WaitingCursor }[]> {
  const type = routeDelayType(control.route.options.qId);
  const [rows, partitions] = await Promise.all([delay.waitingPage(type, 'all', after, limit), control.partitions()]);
  return rows.map((row) => ({ task: delayedInfo(row, partitions), at: { due: row.due, seq: row.seq } }));
}

/**
 * One page of the route queue's tasks in a state, partitions in order (each: waiting in list order, in
 * flight by seq, dead oldest first), from per-partition lengths: O(partitions + page) in Redis.
 */
export async function listOrderedTasks(
  control: RouteControlStore, delay: DelayQueueStore, state: OrderedListState, offset: number, limit: number,
): Promise<TaskInfo[]> {
  if (state === 'delayed') return listDelayed(control, delay, offset, limit);
  const lengths = await control.lengths(state, await control.route.partitionCount());
  const slices = pageSlices(lengths, offset, limit);
  const pages = await Promise.all(slices.map(({ partition, start, stop }) => control.range(state, partition, start, stop)));
  return pages.flatMap((entries, i) => entries.map((entry) => entryInfo(entry, state, slices[i].partition)));
}
