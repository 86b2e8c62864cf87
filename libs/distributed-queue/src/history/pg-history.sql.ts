import { parseFlowNodeId } from '../flow/flow-keys';
import { readLogs } from '../runtime/report-text';
import { readResult } from '../runtime/result-text';
import type { TaskHistoryRecord } from './history-event';
import type { TaskPatch } from './history-fold';
import type { HistoryTableNames } from './pg-history.options';
import { pgJsonText, pgText } from './pg-text';

/** SQL for epoch ms (a bigint expression) as timestamptz, exactly (no float rounding). */
const ts = (ms: string): string => `(timestamptz 'epoch' + ${ms} * interval '1 millisecond')`;
/** SQL for a timestamptz column as epoch ms (float8: a JS number). */
const ms = (column: string): string => `(extract(epoch from ${column}) * 1000)::float8`;

/** SQL: stream entry id `a` (`<ms>-<seq>`) comes after `b`. */
export const entryAfter = (a: string, b: string): string =>
  `(split_part(${a}, '-', 1)::numeric, split_part(${a}, '-', 2)::numeric) > ` +
  `(split_part(${b}, '-', 1)::numeric, split_part(${b}, '-', 2)::numeric)`;

/** The patch fields as record columns (name in the JSON parameter, SQL type). */
export const PARAMS: [keyof TaskPatch, string, string][] = [
  ['topic', 'topic', 'text'],
  ['id', 'id', 'text'],
  ['submitted', 'submitted', 'bool'],
  ['status', 'status', 'text'],
  ['reentry', 'reentry', 'int'],
  ['delayMs', 'delay_ms', 'bigint'],
  ['ttrMs', 'ttr_ms', 'bigint'],
  ['body', 'body', 'text'],
  ['key', 'ordering_key', 'text'],
  ['partition', 'partition', 'int'],
  ['lastError', 'last_error', 'jsonb'],
  ['machine', 'machine', 'text'],
  ['result', 'result', 'text'],
  ['logs', 'logs', 'text'],
  ['createTime', 'create_time', 'bigint'],
  ['dueTime', 'due_time', 'bigint'],
  ['executionTime', 'execution_time', 'bigint'],
  ['finishedTime', 'finished_time', 'bigint'],
  ['updatedTime', 'updated_time', 'bigint'],
  ['lastEntry', 'last_entry', 'text'],
];

/** Columns kept when a batch does not know them (no `submitted` in it), else replaced. */
const KEPT = ['reentry', 'delay_ms', 'ttr_ms', 'body', 'ordering_key', 'partition', 'last_error', 'machine', 'result', 'logs'];
const KEPT_TIMES = ['due_time', 'execution_time'];

/**
 * One statement upserting every patch (one JSON array of records: cheaper than node-postgres's escaping
 * of 18 arrays; read as json, not jsonb, which PostgreSQL parses faster for a record set read once). A row changes only when the patch's last
 * entry comes after the row's: re-applying a batch, or an older one, changes nothing. One exception: a
 * `submitted` patch for a row built without its submit (`submitted` false) fills in what only the submit
 * knows (create time, and the columns the row lacks: payload, delay, due time...) and keeps the row's later
 * state: a delayed ordered task's submit is logged on the delay queue's stream, which may be copied after
 * the task's partition's stream (another writer, or a writer catching up).
 */
export function upsertSql(n: HistoryTableNames): string {
  const columns = `${PARAMS.map(([, column, type]) => `${column} ${type}`).join(', ')}, flow_id text`;
  return `INSERT INTO ${n.history} AS h (topic, id, submitted, status, ${KEPT.join(', ')}, create_time, ${KEPT_TIMES.join(', ')},
      finished_time, updated_time, last_entry, flow_id)
    SELECT p.topic, p.id, p.submitted, p.status, p.reentry, p.delay_ms, p.ttr_ms, p.body, p.ordering_key, p.partition,
      p.last_error, p.machine, p.result, p.logs, ${ts('p.create_time')}, ${ts('p.due_time')}, ${ts('p.execution_time')},
      ${ts('p.finished_time')}, ${ts('p.updated_time')}, p.last_entry, p.flow_id
    FROM json_to_recordset($1::json) AS p(${columns})
    ${upsertConflict()}`;
}

/**
 * The upsert's conflict clause (see upsertSql), for an `INSERT INTO <history> AS h` of rows with every column:
 * a row changes only when the new last entry comes after the row's, or when a submit fills in a row built
 * without it.
 */
export function upsertConflict(): string {
  const newer = entryAfter('EXCLUDED.last_entry', 'h.last_entry');
  const keep = (c: string): string =>
    `${c} = CASE WHEN NOT (${newer}) THEN coalesce(h.${c}, EXCLUDED.${c}) WHEN EXCLUDED.submitted THEN EXCLUDED.${c} ELSE coalesce(EXCLUDED.${c}, h.${c}) END`;
  const latest = (c: string): string => `${c} = CASE WHEN ${newer} THEN EXCLUDED.${c} ELSE h.${c} END`;
  return `ON CONFLICT (topic, id) DO UPDATE SET
      submitted = EXCLUDED.submitted OR h.submitted,
      create_time = CASE WHEN EXCLUDED.submitted THEN EXCLUDED.create_time ELSE h.create_time END,
      flow_id = coalesce(h.flow_id, EXCLUDED.flow_id),
      ${[...KEPT, ...KEPT_TIMES].map(keep).join(',\n      ')},
      ${['status', 'finished_time', 'updated_time', 'last_entry'].map(latest).join(',\n      ')}
    WHERE ${newer} OR (EXCLUDED.submitted AND NOT h.submitted)`;
}

/** A string field as JSON, with what PostgreSQL refuses replaced (see pg-text.ts). */
const str = (s: string): string => JSON.stringify(pgText(s));

/**
 * One patch as a JSON record of PARAMS' columns and `flow_id` (a flow node's, from its task id), null fields
 * left out; `last_error` is already JSON text. Characters PostgreSQL refuses are written as U+FFFD (pg-text.ts).
 */
function recordJson(p: TaskPatch): string {
  let r = `{"topic":${str(p.topic)},"id":${str(p.id)},"submitted":${p.submitted},"status":"${p.status}","create_time":${p.createTime},"updated_time":${p.updatedTime},"last_entry":"${p.lastEntry}"`;
  if (p.reentry !== null) r += `,"reentry":${p.reentry}`;
  if (p.delayMs !== null) r += `,"delay_ms":${p.delayMs}`;
  if (p.ttrMs !== null) r += `,"ttr_ms":${p.ttrMs}`;
  if (p.body !== null) r += `,"body":${str(p.body)}`;
  if (p.key !== null) r += `,"ordering_key":${str(p.key)}`;
  if (p.partition !== null) r += `,"partition":${p.partition}`;
  if (p.lastError !== null) r += `,"last_error":${pgJsonText(p.lastError)}`;
  if (p.machine !== null) r += `,"machine":${str(p.machine)}`;
  if (p.result !== null) r += `,"result":${str(p.result)}`;
  if (p.logs !== null) r += `,"logs":${str(p.logs)}`;
  if (p.dueTime !== null) r += `,"due_time":${p.dueTime}`;
  if (p.executionTime !== null) r += `,"execution_time":${p.executionTime}`;
  if (p.finishedTime !== null) r += `,"finished_time":${p.finishedTime}`;
  const flow = parseFlowNodeId(p.id);
  if (flow) r += `,"flow_id":${str(flow.flowId)}`;
  return `${r}}`;
}

/**
 * The upsert's one parameter: the patches as a JSON array of records, written directly (hot path: one
 * record per task; the record set reads absent fields as NULL).
 */
export function upsertParams(patches: readonly TaskPatch[]): string[] {
  return [`[${patches.map(recordJson).join(',')}]`];
}

/** Records a stream's position, never moving it back. */
export function savePositionSql(n: HistoryTableNames): string {
  return `INSERT INTO ${n.positions} AS s (stream, last_id, updated_time) VALUES ($1, $2, now())
    ON CONFLICT (stream) DO UPDATE SET last_id = EXCLUDED.last_id, updated_time = EXCLUDED.updated_time
    WHERE ${entryAfter('EXCLUDED.last_id', 's.last_id')}`;
}

/** The select list a `HistoryRow` comes from. */
export const ROW_COLUMNS = `topic, id, status, reentry, delay_ms::float8 AS delay_ms, ttr_ms::float8 AS ttr_ms, body,
  ordering_key, partition, flow_id, last_error, result, logs, machine, ${ms('create_time')} AS create_ms, ${ms('due_time')} AS due_ms,
  ${ms('execution_time')} AS execution_ms, ${ms('finished_time')} AS finished_ms, ${ms('updated_time')} AS updated_ms`;

/** A row as `ROW_COLUMNS` selects it. */
export interface HistoryRow {
  topic: string;
  id: string;
  status: string;
  reentry: number | null;
  delay_ms: number | null;
  ttr_ms: number | null;
  body: string | null;
  ordering_key: string | null;
  partition: number | null;
  flow_id: string | null;
  last_error: { name: string; message: string; stack?: string } | null;
  result: string | null;
  logs: string | null;
  machine: string | null;
  create_ms: number;
  due_ms: number | null;
  execution_ms: number | null;
  finished_ms: number | null;
  updated_ms: number;
}

function parsePayload(body: string | null): unknown {
  if (body === null) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** The record of a row. */
export function toRecord(r: HistoryRow): TaskHistoryRecord {
  const record: TaskHistoryRecord = {
    type: r.topic,
    id: r.id,
    status: r.status,
    attempts: r.reentry ?? 0,
    delayMs: r.delay_ms,
    timeoutMs: r.ttr_ms,
    payload: parsePayload(r.body),
    key: r.ordering_key,
    partition: r.partition,
    flowId: r.flow_id,
    lastError: r.last_error,
    machine: r.machine,
    createdAt: r.create_ms,
    dueAt: r.due_ms,
    startedAt: r.execution_ms,
    finishedAt: r.finished_ms,
    updatedAt: r.updated_ms,
  };
  const kept = readResult(r.result);
  if ('notKept' in kept) record.resultNotKept = kept.notKept;
  else if (kept.value !== undefined) record.result = kept.value;
  const logs = readLogs(r.logs);
  if (logs) {
    record.logs = logs.lines;
    if (logs.dropped > 0) record.logsDropped = logs.dropped;
  }
  return record;
}
