import { InvalidArgumentError } from '../errors';
import type { HistoryEvent } from './history-event';
import type { HistoryStatus } from './history-event';

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
  /** A done task's result as kept (JSON text, or `!<bytes>` not kept; see runtime/result-text.ts). */
  result: string | null;
  /** The task's log lines as Redis held them (raw, see runtime/report-text.ts readLogs): the latest event's that carried them. */
  logs: string | null;
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
  rescheduled: 'waiting',
  started: 'running',
  retrying: 'retrying',
  completed: 'done',
  dead: 'dead',
  cancelled: 'cancelled',
  recovered: 'waiting',
};

const FINISHED = new Set<HistoryStatus>(['done', 'dead', 'cancelled']);

/** True for the statuses a task ends in (done, dead, cancelled). */
export const isFinished = (status: HistoryStatus): boolean => FINISHED.has(status);
const ENTRY_ID = /^\d{1,20}-\d{1,20}$/;

/** True when `value` is a stream entry id (`<ms>-<seq>`). */
export function isEntryId(value: unknown): value is string {
  return typeof value === 'string' && ENTRY_ID.test(value);
}

const INTEGER_FIELDS = ['at', 'attempt', 'dueAt', 'delayMs', 'timeoutMs', 'partition', 'startedAt'] as const;
const TEXT_FIELDS = ['body', 'key', 'machine', 'logs'] as const;

/** What is wrong with an event (to name it in an error), or undefined when the store can apply it. */
export function historyEventProblem(e: HistoryEvent): string | undefined {
  if (!e || typeof e !== 'object') return 'is not an object';
  if (!Object.prototype.hasOwnProperty.call(STATUS, e.event)) return `has an unknown event ${JSON.stringify(e.event)}`;
  if (typeof e.type !== 'string' || !e.type || typeof e.id !== 'string' || !e.id) return 'needs a type and an id';
  if (e.at === undefined) return 'needs a time (at)';
  if (!isEntryId(e.entryId)) return `has a bad entryId ${JSON.stringify(e.entryId)}`;
  const integer = INTEGER_FIELDS.find((f) => e[f] != null && !Number.isSafeInteger(e[f]));
  if (integer) return `has a ${integer} that is not an integer`;
  const text = TEXT_FIELDS.find((f) => e[f] != null && typeof e[f] !== 'string');
  if (text) return `has a ${text} that is not a string`;
  if (e.error != null && (typeof e.error.name !== 'string' || typeof e.error.message !== 'string')) {
    return 'has an error without a name and a message';
  }
  if (e.error != null && e.error.stack != null && typeof e.error.stack !== 'string') return 'has an error stack that is not a string';
  return undefined;
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
    result: null,
    logs: null,
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
  if (e.attempt != null) p.reentry = e.attempt;
  if (e.dueAt != null) p.dueTime = e.dueAt;
  if (e.delayMs != null) p.delayMs = e.delayMs;
  if (e.timeoutMs != null) p.ttrMs = e.timeoutMs;
  if (e.body != null) p.body = e.body;
  if (e.key != null) p.key = e.key;
  if (e.partition != null) p.partition = e.partition;
  if (e.machine != null) p.machine = e.machine;
  if (e.result != null) p.result = e.result;
  if (e.logs != null) p.logs = e.logs;
  if (e.error != null) p.lastError = JSON.stringify({ name: e.error.name, message: e.error.message, stack: e.error.stack });
  if (e.event === 'started') p.executionTime = e.at;
  if (e.startedAt != null) p.executionTime = e.startedAt;
  p.finishedTime = FINISHED.has(p.status) ? e.at : null;
  p.updatedTime = e.at;
  p.lastEntry = e.entryId;
  return p;
}

/** The key a task's patch goes under (type and id). */
export const patchKey = (e: { type: string; id: string }): string => `${e.type}\u0000${e.id}`;

/**
 * Brings `patch` (the task's state so far, or undefined for none) to after event `e`; returns the patch
 * (the same object, or a new one when `e` restarts the row). `e` must be valid (see historyEventProblem).
 */
export function stepPatch(patch: TaskPatch | undefined, e: HistoryEvent): TaskPatch {
  return step(patch ?? blank(e), e);
}

/** An event left out of a batch because it cannot be applied, and why. */
export interface SkippedEvent {
  event: HistoryEvent;
  problem: string;
}

/**
 * Folds a batch (in stream order) into one patch per task, in the order tasks first appear, so one upsert
 * statement writes each row once; malformed events are left out and returned with why.
 */
export function foldValidEvents(events: Iterable<HistoryEvent>): { patches: TaskPatch[]; skipped: SkippedEvent[] } {
  const patches = new Map<string, TaskPatch>();
  const skipped: SkippedEvent[] = [];
  for (const event of events) {
    const problem = historyEventProblem(event);
    if (problem) {
      skipped.push({ event, problem });
      continue;
    }
    const k = patchKey(event);
    patches.set(k, stepPatch(patches.get(k), event));
  }
  return { patches: [...patches.values()], skipped };
}

/**
 * Folds a batch like foldValidEvents, for input that must be well formed.
 * @throws InvalidArgumentError naming `events` for a malformed event
 */
export function foldHistoryEvents(events: readonly HistoryEvent[]): TaskPatch[] {
  events.forEach((e, i) => {
    const problem = historyEventProblem(e);
    if (problem) throw new InvalidArgumentError('events', `event ${i} ${problem}`);
  });
  return foldValidEvents(events).patches;
}
