import type { Due, NewTask } from '../delay/delay-queue.store';
import type { DedupeOutcome, TaskDedupe } from '../delay/delay-queue.types';
import type { TaskEventBus } from '../events/task-event-bus';
import type { TaskErrorInfo, TaskEventName } from '../interfaces';
import { waitersChannel } from '../delay/task-waiters';
import { isInternalType } from '../distributed-queue.constants';
import { splitTraceContext } from '../tracing/trace-carrier';
import type { MemoryEventSubscriber } from './memory-event-subscriber';
import type { TestClock } from './test-clock';
import { MemoryType, type MemoryTask } from './memory-type';

/** Events kept for `getActivity`, as the real stream keeps its newest entries. */
const MAX_ACTIVITY = 10_000;

/** A task as the testing module records its submit (`TestQueue.getSubmitted`). */
export interface SubmittedTask<P = unknown> {
  /** The task type. */
  type: string;
  /** The task's id (given or generated). */
  id: string;
  /** The payload as a handler gets it (after a JSON round trip). */
  payload: P;
  /** When it was due at its submit (epoch ms of the test clock). */
  dueAt: number;
  /** Its priority (0: the most urgent; the type's `defaultPriority` when the submit gave none; 0 for ordered tasks). */
  priority: number;
  /** Its group (`SubmitOptions.group`), when it has one. */
  group?: string;
  /** When it was submitted (test clock). */
  submittedAt: number;
  /** An ordered task's key. */
  key?: string;
}

/** What the engine needs to know of a type beyond its tasks: its `defaultPriority`, `agingMs` and `keepDone`. */
export interface TypeSettings {
  defaultPriority?: number;
  agingMs?: number;
}

/**
 * The in-memory engine's state: every delay-queue type's tasks, the test clock, and the ends it tells
 * (waiters and fleet listeners). The stores answer the services from it; the runner runs its tasks.
 */
export class MemoryEngine {
  private readonly types = new Map<string, MemoryType>();
  readonly submitted: SubmittedTask[] = [];
  /** The events of the last MAX_ACTIVITY ends and failures (what `getActivity` counts). */
  readonly activity: { type: string; event: TaskEventName; at: number }[] = [];
  private readonly changeHooks = new Set<() => void>();

  constructor(
    readonly clock: TestClock,
    private readonly keyPrefix: string,
    readonly keepDone: number,
    private readonly bus: TaskEventBus,
    private readonly subscriber: MemoryEventSubscriber,
    readonly settings: (type: string) => TypeSettings,
  ) {}

  type(name: string): MemoryType {
    let queue = this.types.get(name);
    if (!queue) this.types.set(name, (queue = new MemoryType(name)));
    return queue;
  }

  /** Every type that has held a task. */
  allTypes(): MemoryType[] {
    return [...this.types.values()];
  }

  /** Calls `hook` whenever tasks may have become runnable (a submit, a resume, a re-drive). */
  onChange(hook: () => void): () => void {
    this.changeHooks.add(hook);
    return () => this.changeHooks.delete(hook);
  }

  /** How many times something changed that may let a task start (see `changed`). */
  changes = 0;

  changed(): void {
    this.changes++;
    for (const hook of this.changeHooks) hook();
  }

  /** A due time on the test clock (a time in the past is kept: it is due at once, before later ones). */
  dueAt(due: Due): number {
    return 'at' in due ? Math.floor(due.at) : this.clock.now() + Math.floor(due.delay);
  }

  /** Adds a task, as the submit script does: an id that is live (waiting, running, dead) creates nothing. */
  add(type: string, task: NewTask, dedupeKey?: string): { id: string; created: boolean } {
    const queue = this.type(type);
    // NOTE: every item takes a number of the type's sequence, created or not; a generated id is that number
    const seq = queue.nextSeq();
    if (task.id && queue.live(task.id)) return { id: task.id, created: false };
    const id = task.id || `#${seq.toString(16)}`;
    const now = this.clock.now();
    const priority = task.priority ?? this.settings(type).defaultPriority ?? 0;
    const created: MemoryTask = {
      id, type, seq, payload: task.payload, state: 'waiting', dueAt: this.dueAt(task.due), priority, attempts: 0, logs: [], logBytes: 0, logsDropped: 0,
    };
    if (task.group !== undefined) created.group = task.group;
    if (task.deadline) created.expireAt = 'at' in task.deadline ? Math.floor(task.deadline.at) : now + Math.floor(task.deadline.delay);
    if (dedupeKey !== undefined) created.dedupeKey = dedupeKey;
    const done = queue.tasks.get(id);
    if (done) queue.done.splice(queue.done.indexOf(id), 1);
    queue.tasks.set(id, created);
    const record: SubmittedTask = { type, id, payload: parsed(task.payload), dueAt: created.dueAt, priority, submittedAt: now };
    if (created.group !== undefined) record.group = created.group;
    if (!isInternalType(type)) this.submitted.push(record);
    else if (type.startsWith('__route__.')) this.recordDelayedOrdered(id, task.payload, created.dueAt, now);
    this.changed();
    return { id, created: true };
  }

  /** An ordered task submitted: recorded for `getSubmitted` with its key (due now, or `dueAt` when delayed). */
  recordOrdered(item: { id: string; type: string; key: string; payload: unknown }, dueAt = this.clock.now()): void {
    this.submitted.push({ type: item.type, id: item.id, key: item.key, payload: item.payload, dueAt, priority: 0, submittedAt: this.clock.now() });
  }

  /** A delayed ordered task waits in the route's delay type as `{ key, item }` (see MoverPayload): recorded as the task it is. */
  private recordDelayedOrdered(id: string, stored: string, dueAt: number, now: number): void {
    try {
      const { item } = JSON.parse(stored) as { item: string };
      const { type, key, payload } = JSON.parse(item) as { type: string; key: string; payload: unknown };
      this.submitted.push({ type, id, key, payload, dueAt, priority: 0, submittedAt: now });
    } catch {
      // NOTE: not a mover's payload: nothing to record
    }
  }

  /**
   * Parks a flow node: a task that exists (its id taken, `getTask` says `pending`) but does not wait to run
   * until `unpark` (its dependencies are the flow store's to count). False when its id is live.
   */
  park(type: string, node: { id: string; payload: string; priority?: number; group?: string }): boolean {
    const queue = this.type(type);
    const seq = queue.nextSeq();
    if (queue.live(node.id)) return false;
    const priority = node.priority ?? this.settings(type).defaultPriority ?? 0;
    const task: MemoryTask = {
      id: node.id, type, seq, payload: node.payload, state: 'parked', dueAt: 0, priority, attempts: 0, logs: [], logBytes: 0, logsDropped: 0,
    };
    if (node.group !== undefined) task.group = node.group;
    queue.tasks.set(node.id, task);
    return true;
  }

  /** A parked node's dependencies are met: it waits to run, due `delay` ms from now. False when it is not parked. */
  unpark(type: string, id: string, delay: number): boolean {
    const task = this.type(type).tasks.get(id);
    if (task?.state !== 'parked') return false;
    task.state = 'waiting';
    task.dueAt = this.clock.now() + delay;
    const record: SubmittedTask = { type, id, payload: parsed(task.payload), dueAt: task.dueAt, priority: task.priority, submittedAt: this.clock.now() };
    if (!isInternalType(type)) this.submitted.push(record);
    this.changed();
    return true;
  }

  /** Removes a parked node (its flow was cancelled). False when it is not parked. */
  dropParked(type: string, id: string): boolean {
    const queue = this.type(type);
    const task = queue.tasks.get(id);
    if (task?.state !== 'parked') return false;
    queue.remove(task);
    return true;
  }

  /** A submit under a dedupe key (see dedupe-11.lua, whose rules this follows). */
  dedupe(type: string, task: NewTask, { key, mode, ttlMs }: TaskDedupe): { id: string; outcome: DedupeOutcome } {
    const queue = this.type(type);
    const now = this.clock.now();
    const entry = queue.dedupe.get(key);
    const standing = entry ? queue.live(entry.id) : undefined;
    const stands = standing !== undefined && standing.state !== 'dead';
    if (entry && (stands || entry.windowEndsAt > now)) {
      if (mode === 'drop') return { id: entry.id, outcome: 'dropped' };
      if (mode === 'extend') {
        entry.windowEndsAt = now + ttlMs;
        return { id: entry.id, outcome: 'extended' };
      }
      if (stands && standing.state === 'waiting') {
        standing.payload = task.payload;
        if (mode === 'debounce') standing.dueAt = this.dueAt(task.due);
        this.changed();
        return { id: standing.id, outcome: mode === 'replace' ? 'replaced' : 'debounced' };
      }
      // NOTE: replace leaves a running task (or none) as it is: nothing to replace
      if (mode === 'replace') return { id: entry.id, outcome: 'dropped' };
    }
    const added = this.add(type, task, key);
    if (!added.created) return { id: added.id, outcome: 'exists' };
    queue.dedupe.set(key, { id: added.id, windowEndsAt: ttlMs > 0 ? now + ttlMs : 0 });
    return { id: added.id, outcome: 'created' };
  }

  /**
   * A task ended (done, dead, cancelled): its waiters hear it, as the scripts tell them (awaiting.lua), and
   * fleet listeners get its event.
   */
  ended(task: MemoryTask, event: 'completed' | 'dead' | 'cancelled', attempt: number, error?: TaskErrorInfo, result?: unknown): void {
    const fields: string[] = ['ids', JSON.stringify([task.id]), 'a', JSON.stringify([attempt])];
    if (event === 'completed' && task.result !== undefined) fields.push('r', JSON.stringify([task.result]));
    if (error) fields.push('err', JSON.stringify([{ name: error.name, message: error.message, ...(error.stack ? { stack: error.stack } : {}) }]));
    this.subscriber.publish(waitersChannel(this.keyPrefix, task.type), JSON.stringify([event, fields]));
    this.fleet(task, event, attempt, error, result);
  }

  /** A fleet event (what another instance would read from the type's stream): no payload, Redis-clock time. */
  fleet(task: MemoryTask, event: TaskEventName, attempt: number, error?: TaskErrorInfo, result?: unknown): void {
    this.activity.push({ type: task.type, event, at: this.clock.now() });
    if (this.activity.length > MAX_ACTIVITY) this.activity.splice(0, this.activity.length - MAX_ACTIVITY);
    if (!this.bus.wants('fleet', task.type, event)) return;
    const view = { id: task.id, type: task.type, payload: undefined, attempt, dueAt: task.dueAt };
    this.bus.emit({ event, scope: 'fleet', task: view, ...(error ? { error } : {}), ...(result !== undefined ? { result } : {}), at: this.clock.now() });
  }

  /** Forgets a type's every task, dead letter and setting (`obliterate`). */
  forget(type: string): void {
    this.types.delete(type);
  }

  /** Forgets every task and submit record (`TestQueue.reset`). */
  clear(): void {
    this.types.clear();
    this.submitted.length = 0;
    this.activity.length = 0;
  }
}

/** A stored payload's value (without the trace context it may carry). */
export function parsed(stored: string): unknown {
  const { json } = splitTraceContext(stored);
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return json;
  }
}
