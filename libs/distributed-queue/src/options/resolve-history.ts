import { InvalidOptionsError } from '../errors';
import type { HistoryOptions } from '../interfaces';
import { MAX_TIMER_MS } from '../runtime/long-timer';
import { checkHistoryName } from '../history/pg-history.options';
import { checkInt, checkKeys } from './checks';

/** History options with defaults applied. */
export type ResolvedHistoryOptions = Required<Omit<HistoryOptions, 'schema' | 'queryTimeoutMs'>> & Pick<HistoryOptions, 'schema' | 'queryTimeoutMs'>;

const KEYS = ['connection', 'table', 'schema', 'retentionDays', 'batchSize', 'flushIntervalMs', 'coalesceMs', 'recordStarts', 'queryTimeoutMs'];

/** Validates and completes the `history` option (absent: null). */
export function resolveHistoryOptions(history: HistoryOptions | undefined, streams: boolean): ResolvedHistoryOptions | null {
  if (history === undefined) return null;
  checkKeys(history, KEYS, 'history');
  const { connection } = history;
  if (!(typeof connection === 'string' && connection.length > 0) && (connection === null || typeof connection !== 'object' || Array.isArray(connection))) {
    throw new InvalidOptionsError('history.connection', 'is required: a PostgreSQL connection string or node-postgres pool options');
  }
  for (const key of ['table', 'schema'] as const) if (history[key] !== undefined) checkHistoryName(key, history[key]);
  checkInt(history.retentionDays, 'history.retentionDays', 1, 36_500);
  checkInt(history.batchSize, 'history.batchSize', 1, 10_000);
  checkInt(history.flushIntervalMs, 'history.flushIntervalMs', 10, MAX_TIMER_MS);
  checkInt(history.coalesceMs, 'history.coalesceMs', 0, 3_600_000);
  checkInt(history.queryTimeoutMs, 'history.queryTimeoutMs', 100, 3_600_000);
  if (history.recordStarts !== undefined && typeof history.recordStarts !== 'boolean') {
    throw new InvalidOptionsError('history.recordStarts', 'must be a boolean');
  }
  if (!streams) throw new InvalidOptionsError('history', 'needs the event streams (events.stream must not be false)');
  return {
    connection,
    table: history.table ?? 'dq_task_history',
    schema: history.schema,
    retentionDays: history.retentionDays ?? 30,
    batchSize: history.batchSize ?? 500,
    flushIntervalMs: history.flushIntervalMs ?? 1000,
    coalesceMs: history.coalesceMs ?? 5000,
    recordStarts: history.recordStarts ?? false,
    queryTimeoutMs: history.queryTimeoutMs,
  };
}
