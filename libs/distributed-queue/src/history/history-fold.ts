import { InvalidArgumentError } from '../errors';
import type { HistoryEvent } from './history-event';
import type { HistoryStatus } from './pg-history.schema';

/**
 * What one batch says about one task: the row's columns after the batch's last event of that task.
 * `submitted` true: the batch holds the task's `submitted` and the row restarts from it (every column is
 * as given). False: the columns left null are not known from this batch and keep their stored values.
 */
export interface TaskPatch {
  topic: string;
  id: string;
  submitted: boolean;
  status: HistoryStatus;
  reentry: number | null;
  delayMs: number | null;
  ttrMs: number | null;
  body: string | null;
  key: string | null;
  partition: number | null;
  /** JSON text of `{ name, message }`. */
  lastError: string | null;
  machine: string | null;
  /** Epoch ms. For a row created without its `submitted`: the first event's time (the earliest known). */
  createTime: number;
  dueTime: number | null;
  executionTime: number | null;
  /** Set by done, dead and cancelled; null for any other status (always written). */
  finishedTime: number | null;
  /** The last event's time and stream entry (always written). */
  updatedTime: number;
  lastEntry: string;
}

const STATUS: Record<HistoryEvent['event'], HistoryStatus> = {
  submitted: 'waiting',
  started: 'running',
  retrying: 'retrying',
  completed: 'done',
  dead: 'dead',
  cancelled: 'cancelled',
  recovered: 'waiting',
};

const FINISHED = new Set<HistoryStatus>(['done', 'dead', 'cancelled']);
const ENTRY_ID = /^\d{1,20}-\d{1,20}$/;

/** True when `value` is a stream entry id (`<ms>-<seq>`). */
export function isEntryId(value: unknown): value is string {
  return typeof value === 'string' && ENTRY_ID.test(value);
}

function check(event: HistoryEvent, index: number): void {
  const problem =
    !event || typeof event !== 'object'
      ? 'is not an object'
      : !(event.event in STATUS)
        ? `has an unknown event ${JSON.stringify(event.event)}`
        : typeof event.type !== 'string' || !event.type || typeof event.id !== 'string' || !event.id
          ? 'needs a type and an id'
          : !Number.isFinite(event.at)
            ? 'needs a time (at)'
            : !isEntryId(event.entryId)
              ? `has a bad entryId ${JSON.stringify(event.entryId)}`
              : undefined;
  if (problem) throw new InvalidArgumentError('events', `event ${index} ${problem}`);
}

function blank(e: HistoryEvent): TaskPatch {
  return {
    topic: e.type,
    id: e.id,
    submitted: false,
    status: STATUS[e.event],
    reentry: null,
    delayMs: null,
    ttrMs: null,
    body: null,
    key: null,
    partition: null,
    lastError: null,
    machine: null,
    createTime: e.at,
    dueTime: null,
    executionTime: null,
    finishedTime: null,
    updatedTime: e.at,
    lastEntry: e.entryId,
  };
}

/** Applies one event to the task's patch: the fields it carries, then what its kind implies. */
function step(p: TaskPatch, e: HistoryEvent): TaskPatch {
  if (e.event === 'submitted') p = { ...blank(e), submitted: true, reentry: 0 };
  p.status = STATUS[e.event];
  if (e.attempt !== undefined) p.reentry = e.attempt;
  if (e.dueAt !== undefined) p.dueTime = e.dueAt;
  if (e.delayMs !== undefined) p.delayMs = e.delayMs;
  if (e.timeoutMs !== undefined) p.ttrMs = e.timeoutMs;
  if (e.body !== undefined) p.body = e.body;
  if (e.key !== undefined) p.key = e.key;
  if (e.partition !== undefined) p.partition = e.partition;
  if (e.machine !== undefined) p.machine = e.machine;
  if (e.error !== undefined) p.lastError = JSON.stringify({ name: e.error.name, message: e.error.message });
  if (e.event === 'started') p.executionTime = e.at;
  p.finishedTime = FINISHED.has(p.status) ? e.at : null;
  p.updatedTime = e.at;
  p.lastEntry = e.entryId;
  return p;
}

/**
 * Folds a batch (in stream order) into one patch per task, in the order tasks first appear, so one upsert
 * statement writes each row once.
 * @throws InvalidArgumentError naming `events` for a malformed event
 */
export function foldHistoryEvents(events: readonly HistoryEvent[]): TaskPatch[] {
  const patches = new Map<string, TaskPatch>();
  events.forEach((e, i) => {
    check(e, i);
    const k = JSON.stringify([e.type, e.id]);
    patches.set(k, step(patches.get(k) ?? blank(e), e));
  });
  return [...patches.values()];
}
