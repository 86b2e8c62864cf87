import { InvalidArgumentError } from '../errors';
import { quote } from '../errors/quote';
import { checkFlowId } from '../flow/flow-graph';
import type { TaskHistoryRecord } from './history-event';
import { decodeHistoryCursor, HistoryCursor } from './history-cursor';
import { HISTORY_STATUSES, type HistoryStatus } from './history-event';

/** A search of the task history: filters on type, status, flow and submit time, newest first. */
export interface HistorySearch {
  /** Rows of this task type. @default every type */
  type?: string;
  /** Rows in this status. @default every status */
  status?: HistoryStatus;
  /** The rows of one flow's nodes (`submitFlow`'s id). */
  flowId?: string;
  /** Submitted at or after (epoch ms). */
  from?: number;
  /** Submitted before (epoch ms; exclusive). */
  to?: number;
  /**
   * Rows per page, 1 to 1000.
   * @default 100
   */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

/** A page of a history search; `nextCursor` is present when more rows may follow. */
export interface HistoryPage {
  /** The page's rows. */
  rows: TaskHistoryRecord[];
  /** The `cursor` of the next page; absent when no more rows follow. */
  nextCursor?: string;
}

/** A validated search. */
export interface CheckedSearch {
  type?: string;
  status?: HistoryStatus;
  flowId?: string;
  from?: number;
  to?: number;
  limit: number;
  after?: HistoryCursor;
}

export const DEFAULT_SEARCH_LIMIT = 100;
export const MAX_SEARCH_LIMIT = 1000;

function time(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new InvalidArgumentError(name, `${String(value)} is not a time (epoch ms)`);
  }
  return value;
}

/** A flow id as `submitFlow` takes it. @throws InvalidArgumentError naming `flowId` */
function flowIdOf(value: unknown): string {
  try {
    return checkFlowId(value);
  } catch {
    throw new InvalidArgumentError('flowId', `expected a flow id (1 to 64 characters of A-Z a-z 0-9 _ . -), got ${quote(value)}`);
  }
}

/**
 * Validates a search.
 * @throws InvalidArgumentError naming the bad argument (type, status, flowId, from/to, limit, cursor)
 */
export function checkHistorySearch(query: HistorySearch = {}): CheckedSearch {
  const { type, status, flowId, limit = DEFAULT_SEARCH_LIMIT, cursor } = query;
  if (type !== undefined && (typeof type !== 'string' || !type)) {
    throw new InvalidArgumentError('type', 'expected a non-empty string');
  }
  if (status !== undefined && !HISTORY_STATUSES.includes(status)) {
    throw new InvalidArgumentError('status', `${JSON.stringify(status)} is not one of ${HISTORY_STATUSES.join(', ')}`);
  }
  if (flowId !== undefined) flowIdOf(flowId);
  const from = time('from', query.from);
  const to = time('to', query.to);
  if (from !== undefined && to !== undefined && from > to) {
    throw new InvalidArgumentError('from', `from (${from}) is after to (${to})`);
  }
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
    throw new InvalidArgumentError('limit', `${String(limit)} is not an integer from 1 to ${MAX_SEARCH_LIMIT}`);
  }
  return { type, status, flowId, from, to, limit, after: cursor === undefined ? undefined : decodeHistoryCursor(cursor) };
}

/** The WHERE clause and its parameters (epoch ms converted in SQL). */
export function searchWhere(q: CheckedSearch): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  const conditions: string[] = [];
  const param = (value: unknown): string => `$${params.push(value)}`;
  const at = (ms: number): string => `(timestamptz 'epoch' + ${param(ms)}::bigint * interval '1 millisecond')`;
  if (q.type !== undefined) conditions.push(`topic = ${param(q.type)}`);
  if (q.status !== undefined) conditions.push(`status = ${param(q.status)}`);
  if (q.flowId !== undefined) conditions.push(`flow_id = ${param(q.flowId)}`);
  if (q.from !== undefined) conditions.push(`create_time >= ${at(q.from)}`);
  if (q.to !== undefined) conditions.push(`create_time < ${at(q.to)}`);
  if (q.after) {
    conditions.push(`(create_time, topic, id) < (${at(q.after.createdAt)}, ${param(q.after.type)}, ${param(q.after.id)})`);
  }
  return { where: conditions.length ? `WHERE ${conditions.join(' AND ')}` : '', params };
}
