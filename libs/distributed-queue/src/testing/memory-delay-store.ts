import { DelayQueueStore, type Due, type NewTask } from '../delay/delay-queue.store';
import type { DedupeOutcome, ListedTask, TaskDedupe } from '../delay/delay-queue.types';
import type { WaitingCursor, WaitingRange, WaitingRow } from '../delay/waiting-page';
import type { CancelResult, TaskCounts, TaskErrorInfo, TaskState } from '../interfaces';
import { noRedis } from '../redis/no-redis';
import { TaskCancelledError } from '../errors';
import type { MemoryEngine } from './memory-engine';
import type { MemoryLimits } from './memory-limits';
import type { MemoryGroups } from './memory-groups';
import { byDue, recordOf, type MemoryTask } from './memory-type';

/**
 * The delay queue's store of the testing module: the same calls `TaskSubmitService`, `TaskInspectorService`,
 * `QueueControlService` and the waiters make on the real one, answered from the in-memory engine in the
 * shapes the scripts give (records, errors, leases as text), so that those services run unchanged: their
 * checks, errors and decoding are the real ones.
 */
export class MemoryDelayStore extends DelayQueueStore {
  constructor(
    private readonly engine: MemoryEngine,
    private readonly memoryLimits: MemoryLimits,
    private readonly memoryGroups: MemoryGroups,
  ) {
    super(noRedis(), 'memory');
  }

  override get limits(): MemoryLimits {
    return this.memoryLimits;
  }

  override get groups(): MemoryGroups {
    return this.memoryGroups;
  }

  override async submit(type: string, tasks: NewTask[]): Promise<{ id: string; created: boolean }[]> {
    return tasks.map((task) => this.engine.add(type, task));
  }

  override async dedupe(type: string, task: NewTask, dedupe: TaskDedupe): Promise<{ id: string; outcome: DedupeOutcome }> {
    return this.engine.dedupe(type, task, dedupe);
  }

  override async cancel(type: string, id: string): Promise<CancelResult> {
    const queue = this.engine.type(type);
    const task = queue.live(id);
    if (!task || task.state === 'dead' || task.state === 'parked') return 'not-found';
    if (task.state === 'running') {
      if (!task.run!.cancelled) {
        task.run!.cancelled = true;
        task.run!.stop?.(new TaskCancelledError(id));
      }
      return 'cancel-requested';
    }
    queue.remove(task);
    this.engine.ended(task, 'cancelled', task.attempts);
    return 'cancelled';
  }

  override async reschedule(type: string, id: string, due: Due): Promise<number | null> {
    const task = this.engine.type(type).live(id);
    if (task?.state !== 'waiting') return null;
    task.dueAt = this.engine.dueAt(due);
    this.engine.changed();
    return task.dueAt;
  }

  override async changePriority(type: string, id: string, priority: number): Promise<number | null> {
    const task = this.engine.type(type).live(id);
    if (task?.state !== 'waiting') return null;
    const before = task.priority;
    task.priority = priority;
    return before;
  }

  override async get(type: string, id: string): ReturnType<DelayQueueStore['get']> {
    const task = this.engine.type(type).tasks.get(id);
    const none = { record: null, error: null, due: null, attempt: null, leaseExpiresAt: null, leaseHolder: null, result: null, logs: null, progress: null };
    if (!task) return { state: 'unknown', ...none };
    const running = task.state === 'running' ? task.run! : undefined;
    // NOTE: a done task keeps no record (no attempts, due time, payload or error): its result and log only
    if (task.state === 'done') return { ...none, state: 'done', result: task.result ?? null, logs: this.logsOf(task) };
    return {
      state: this.stateOf(task),
      record: recordOf(task),
      error: task.error ? JSON.stringify(task.error) : null,
      due: task.dueAt,
      attempt: running ? running.attempt : null,
      leaseExpiresAt: running ? running.leaseExpiresAt : null,
      leaseHolder: running ? 'memory' : null,
      result: null,
      logs: this.logsOf(task),
      progress: running ? (task.progress ?? null) : null,
    };
  }

  override async raiseWaitersFlag(): Promise<void> {
    // NOTE: the engine tells the waiters of every end: there is no flag to raise
  }

  override async result(type: string, id: string): Promise<string | null> {
    const task = this.engine.type(type).tasks.get(id);
    return task?.state === 'done' ? (task.result ?? null) : null;
  }

  override async deadList(type: string, offset: number, limit: number): ReturnType<DelayQueueStore['deadList']> {
    const queue = this.engine.type(type);
    // NOTE: as the dead set's scores order them: time of death, then id (ties are common on a still clock)
    const ids = [...queue.dead].sort((a, b) => (queue.tasks.get(a)!.diedAt ?? 0) - (queue.tasks.get(b)!.diedAt ?? 0) || (a < b ? -1 : a > b ? 1 : 0));
    const items = ids.slice(offset, offset + limit).map((id) => {
      const task = queue.tasks.get(id)!;
      return { id, diedAt: task.diedAt ?? 0, record: recordOf(task), error: task.error ? JSON.stringify(task.error) : null };
    });
    return { total: ids.length, items };
  }

  override async redrive(type: string, ids: string[], limit: number): Promise<number> {
    const queue = this.engine.type(type);
    const picked = ids.length > 0 ? ids : (await this.deadList(type, 0, limit)).items.map((item) => item.id);
    let count = 0;
    for (const id of picked) {
      const task = queue.tasks.get(id);
      if (!task || task.state !== 'dead') continue;
      queue.dead.delete(id);
      Object.assign(task, { state: 'waiting', attempts: 0, dueAt: this.engine.clock.now(), seq: queue.nextSeq() });
      delete task.expireAt;
      delete task.diedAt;
      delete task.error;
      count++;
    }
    if (count > 0) this.engine.changed();
    return count;
  }

  override async deleteDead(type: string, ids: string[]): Promise<number> {
    const queue = this.engine.type(type);
    let count = 0;
    for (const id of ids) {
      const task = queue.tasks.get(id);
      if (task?.state !== 'dead') continue;
      queue.remove(task);
      count++;
    }
    return count;
  }

  override async counts(type: string): Promise<TaskCounts> {
    const queue = this.engine.type(type);
    const now = this.engine.clock.now();
    const counts: TaskCounts = { delayed: 0, ready: 0, running: 0, dead: queue.dead.size, done: queue.done.length };
    const priorities: Record<string, number> = {};
    for (const task of queue.tasks.values()) {
      if (task.state === 'running') counts.running++;
      if (task.state !== 'waiting') continue;
      if (task.dueAt <= now) counts.ready++;
      else counts.delayed++;
      priorities[task.priority] = (priorities[task.priority] ?? 0) + 1;
    }
    if (Object.keys(priorities).some((p) => p !== '0')) counts.priorities = { '0': 0, ...priorities };
    return counts;
  }

  override async list(type: string, state: WaitingRange | 'running' | 'done', offset: number, limit: number): Promise<ListedTask[]> {
    const queue = this.engine.type(type);
    let tasks: MemoryTask[];
    if (state === 'running') tasks = queue.running().sort((a, b) => a.run!.leaseExpiresAt - b.run!.leaseExpiresAt);
    else if (state === 'done') tasks = [...queue.done].reverse().map((id) => queue.tasks.get(id)!).filter(Boolean);
    else tasks = this.inRange(type, state);
    return tasks.slice(offset, offset + limit).map((task) => ({
      id: task.id,
      due: task.dueAt,
      record: task.state === 'done' ? null : recordOf(task),
      attempt: task.state === 'running' ? task.run!.attempt : null,
    }));
  }

  override async waitingPage(type: string, range: WaitingRange, after: WaitingCursor | null, limit: number): Promise<(ListedTask & WaitingRow)[]> {
    const from = after ? this.inRange(type, range).findIndex((t) => t.dueAt > after.due || (t.dueAt === after.due && t.seq > after.seq)) : 0;
    const tasks = from < 0 ? [] : this.inRange(type, range).slice(from, from + limit);
    return tasks.map((task) => ({ id: task.id, seq: task.seq, due: task.dueAt, record: recordOf(task), attempt: null }));
  }

  override async setPaused(type: string, paused: boolean): Promise<void> {
    this.engine.type(type).paused = paused;
    if (!paused) this.engine.changed();
  }

  override async isPaused(type: string): Promise<boolean> {
    return this.engine.type(type).paused;
  }

  override async touchPresence(): Promise<void> {}

  override async leavePresence(): Promise<void> {}

  override async lastFailedOn(): Promise<string | null> {
    return null;
  }

  private inRange(type: string, range: WaitingRange): MemoryTask[] {
    const now = this.engine.clock.now();
    const waiting = this.engine.type(type).waiting().sort(byDue);
    return range === 'all' ? waiting : waiting.filter((t) => (range === 'ready') === t.dueAt <= now);
  }

  /** The log as the store keeps it ("<dropped> <run> <last line> <lines>\n<line>...", see readLogs), or null. */
  private logsOf(task: MemoryTask): string | null {
    return task.logs.length > 0 || task.logsDropped > 0 ? `${task.logsDropped} 0 0 ${task.logs.length}\n${task.logs.join('\n')}` : null;
  }

  private stateOf(task: MemoryTask): TaskState {
    if (task.state === 'parked') return 'pending';
    if (task.state === 'waiting') return task.dueAt <= this.engine.clock.now() ? 'ready' : 'delayed';
    return task.state;
  }
}

/** A failure as the store keeps it (`TaskErrorInfo`), with the attempt it ended. */
export function errorInfo(error: Error, attempts: number, failedAt: number, stack?: string): TaskErrorInfo {
  const info: TaskErrorInfo = { name: error.name || 'Error', message: error.message, attempts, failedAt };
  if (stack) info.stack = stack;
  return info;
}
