import type { TaskErrorInfo } from '../interfaces';

/** Where a task of the in-memory engine is. */
/** `parked`: a flow node waiting for its dependencies (`pending` to the inspector). */
export type MemoryTaskState = 'parked' | 'waiting' | 'running' | 'done' | 'dead';

/** A delay-queue task as the in-memory engine keeps it (one object through its whole life). */
export interface MemoryTask {
  id: string;
  type: string;
  /** Submission order within the type (FIFO among tasks due together). */
  seq: number;
  /** The payload's JSON, with the trace context it was submitted under (as the record stores it). */
  payload: string;
  state: MemoryTaskState;
  dueAt: number;
  priority: number;
  group?: string;
  /** Its deadline: no attempt starts after it. */
  expireAt?: number;
  /** Attempts started and ended (the running one not included). */
  attempts: number;
  /** The running attempt: its number, when its lease ends, whether a cancel asked it to stop. */
  run?: { attempt: number; token: string; leaseExpiresAt: number; cancelled: boolean; controller?: AbortController; stop?: (error: Error) => void };
  /** The last failure, as `TaskErrorInfo`. */
  error?: TaskErrorInfo;
  /** The kept result's text (see `resultText`), for a done task. */
  result?: string;
  diedAt?: number;
  doneAt?: number;
  /** Log lines as stored (see `logLineText`), oldest first. */
  logs: string[];
  logBytes: number;
  logsDropped: number;
  /** The running attempt's last progress, as JSON text. */
  progress?: string;
  /** The dedupe key it stands for. */
  dedupeKey?: string;
}

/** A dedupe key's entry: the task standing for it and its window's end (0: none). */
export interface DedupeEntry {
  id: string;
  windowEndsAt: number;
}

/** Everything the in-memory engine keeps of one delay-queue type. */
export class MemoryType {
  /** Live tasks (waiting, running, dead) and the done ones still remembered, by id. */
  readonly tasks = new Map<string, MemoryTask>();
  /** Ids of finished tasks, oldest first (at most keepDone). */
  readonly done: string[] = [];
  /** Ids of dead letters in the order they died. */
  readonly dead = new Set<string>();
  readonly dedupe = new Map<string, DedupeEntry>();
  paused = false;
  /** The fleet-wide pause a `RateLimitedError` starts: nothing is taken before it ends. */
  pausedUntil = 0;
  private seqCounter = 0;

  constructor(readonly name: string) {}

  nextSeq(): number {
    return ++this.seqCounter;
  }

  /** The live task of `id` (parked, waiting, running or dead), or undefined; a done one is not live. */
  live(id: string): MemoryTask | undefined {
    const task = this.tasks.get(id);
    return task && task.state !== 'done' ? task : undefined;
  }

  /** Waiting tasks in (due, submission) order. */
  waiting(): MemoryTask[] {
    return [...this.tasks.values()].filter((t) => t.state === 'waiting').sort(byDue);
  }

  running(): MemoryTask[] {
    return [...this.tasks.values()].filter((t) => t.state === 'running');
  }

  /**
   * Due waiting tasks in the order workers take them: by priority (with `agingMs`, a task that waited that
   * much longer counts one level more urgent), then due time, then submission.
   */
  due(now: number, agingMs?: number): MemoryTask[] {
    const due = [...this.tasks.values()].filter((t) => t.state === 'waiting' && t.dueAt <= now);
    const rank = (t: MemoryTask): number => (agingMs ? t.priority * agingMs + t.dueAt : t.priority);
    return due.sort((a, b) => rank(a) - rank(b) || a.dueAt - b.dueAt || a.seq - b.seq);
  }

  /** The earliest due time of a waiting task, or null. */
  nextDueAt(): number | null {
    let next: number | null = null;
    for (const t of this.tasks.values()) if (t.state === 'waiting' && (next === null || t.dueAt < next)) next = t.dueAt;
    return next;
  }

  /** Remembers a finished task; the oldest beyond `keepDone` are forgotten (record, result and log). */
  finish(task: MemoryTask, keepDone: number): void {
    task.state = 'done';
    this.done.push(task.id);
    while (this.done.length > keepDone) {
      const old = this.done.shift()!;
      if (this.tasks.get(old)?.state === 'done') this.tasks.delete(old);
    }
    if (keepDone === 0) this.tasks.delete(task.id);
  }

  /** Forgets a task (cancelled, drained, deleted from dead letters). */
  remove(task: MemoryTask): void {
    this.tasks.delete(task.id);
    this.dead.delete(task.id);
    this.release(task);
  }

  /** Its dedupe key no longer stands for it (the window, if any, still runs). */
  release(task: MemoryTask): void {
    if (!task.dedupeKey) return;
    const entry = this.dedupe.get(task.dedupeKey);
    if (entry?.id === task.id && entry.windowEndsAt === 0) this.dedupe.delete(task.dedupeKey);
  }
}

export const byDue = (a: MemoryTask, b: MemoryTask): number => a.dueAt - b.dueAt || a.seq - b.seq;

/**
 * The record the real engine stores for a task (see `decodeRecord`): the long form
 * `~<attempts>:<seq>:<due>:<flags>:<payload>`, flags `p<priority>` and `x<deadline>`.
 */
export function recordOf(task: MemoryTask): string {
  let flags = task.priority > 0 ? `p${task.priority}` : '';
  if (task.expireAt !== undefined) flags += `x${task.expireAt}`;
  return `~${task.attempts}:${task.seq}:${task.dueAt}:${flags}:${task.payload}`;
}
