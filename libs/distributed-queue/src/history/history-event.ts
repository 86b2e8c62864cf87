import type { TaskLogLine } from '../interfaces/task.interface';

/**
 * One lifecycle event of one task as the history writer hands it to the store, in the order its stream holds
 * them (a type's stream, or a route partition's). Fields beyond the first five are present when the event
 * carries them.
 */
export interface HistoryEvent {
  /**
   * What happened. `submitted` starts (or restarts, for a reused id) the task's row; `rescheduled` (history
   * only: no fleet event) moves a waiting task's due time and delay.
   */
  event: 'submitted' | 'rescheduled' | 'started' | 'completed' | 'retrying' | 'dead' | 'cancelled' | 'recovered';
  /** The task type (the seed's `topic`). */
  type: string;
  /** The task's id. */
  id: string;
  /** When it happened (epoch ms, Redis clock). */
  at: number;
  /** The stream entry it came from (`<ms>-<seq>`): the writer's position. */
  entryId: string;
  /** started, completed, retrying, dead: the attempt (the seed's `reentry`). */
  attempt?: number;
  /** submitted, rescheduled: when it is due (epoch ms). */
  dueAt?: number;
  /** submitted, rescheduled: the delay asked for (due − the submit's or reschedule's time, ms; the seed's `delay`). */
  delayMs?: number;
  /** submitted: the payload as stored (JSON text; the seed's `body`). */
  body?: string;
  /** completed: the handler's result as kept (JSON text, or `!<bytes>` not kept; see runtime/result-text.ts). */
  result?: string;
  /** submitted: the handler timeout of its type (ms; the seed's `ttr`), when the submitter knows it. */
  timeoutMs?: number;
  /** Ordered tasks: the ordering key. */
  key?: string;
  /** Ordered tasks: the partition. */
  partition?: number;
  /** started, and completed or failed attempts: the worker process (host/pid). */
  machine?: string;
  /** completed, retrying, dead: when the attempt started (epoch ms, Redis clock). */
  startedAt?: number;
  /** retrying, dead: the error (`stack`: bounded, when the failed attempt's error had one). */
  error?: {
    /** The error's name (its class name). */
    name: string;
    /** The error's message. */
    message: string;
    /** The error's stack, bounded to `MAX_STACK_BYTES`. */
    stack?: string;
  };
  /**
   * completed, retrying, dead of a delay-queue task: its log lines as Redis held them when the writer copied
   * the event (raw, see scripts/includes/task-logs.lua; runtime/report-text.ts readLogs reads them). Not in
   * the stream: the writer reads them beside it (see history-logs.ts).
   */
  logs?: string;
}

/** The statuses of a history row. */
export const HISTORY_STATUSES = ['waiting', 'running', 'retrying', 'done', 'dead', 'cancelled'] as const;
/** The status of a history row: `waiting`, `running`, `retrying`, `done`, `dead` or `cancelled`. */
export type HistoryStatus = (typeof HISTORY_STATUSES)[number];

/** A task's row in the history: its life so far, kept current. */
export interface TaskHistoryRecord {
  /** The task type. */
  type: string;
  /** The task's id. */
  id: string;
  /** waiting, running, retrying, done, dead, cancelled. */
  status: string;
  /** Attempts started (the seed's `reentry`). */
  attempts: number;
  /** The delay asked for at the submit or last reschedule (ms), or null. */
  delayMs: number | null;
  /** The handler timeout of its type (ms) when the submitter knew it, or null. */
  timeoutMs: number | null;
  /** The payload as submitted (parsed JSON; undefined when it is not JSON). */
  payload: unknown;
  /** Ordered tasks: the ordering key; null for others. */
  key: string | null;
  /** Ordered tasks: the partition; null for others. */
  partition: number | null;
  /** A flow node's row: its flow's id (`TaskFlowService.getFlow`); null for any other task. */
  flowId: string | null;
  /** The last failed attempt's error; `stack` when it had one (bounded, see `TaskErrorInfo.stack`). */
  lastError: {
    /** The error's name (its class name). */
    name: string;
    /** The error's message. */
    message: string;
    /** The error's stack, bounded to `MAX_STACK_BYTES`. */
    stack?: string;
  } | null;
  /** A done task's result, as kept (see `TaskInfo.result`); absent when it returned nothing or it was not kept. */
  result?: unknown;
  /** A result that was not kept: its size in bytes, or -1 (not JSON). */
  resultNotKept?: number;
  /**
   * The task's log lines (`task.log(line)`), oldest first across attempts, as Redis held them when its last
   * attempt's end was copied (see `TaskInfo.logs`); absent when it logged none, for ordered tasks (which keep
   * no logs), and for rows whose last attempt ended before the upgrade (column `logs`, schema version 4).
   */
  logs?: TaskLogLine[];
  /** Lines that were dropped from `logs` to keep within `taskLogs` (the oldest); absent when none were. */
  logsDropped?: number;
  /** The worker process (host/pid) of the last attempt, or null. */
  machine: string | null;
  /** When it was submitted (epoch ms), or null. */
  createdAt: number | null;
  /** When it is or was due (epoch ms), or null. */
  dueAt: number | null;
  /** When its last attempt started (epoch ms; the seed's `execution_time`), or null. */
  startedAt: number | null;
  /** When it finished: done, dead or cancelled (epoch ms), or null. */
  finishedAt: number | null;
  /** When the row last changed (epoch ms). */
  updatedAt: number;
}
