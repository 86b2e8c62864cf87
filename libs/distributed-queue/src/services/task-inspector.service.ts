import { readResult } from '../runtime/result-text';
import { readLogs, readProgress } from '../runtime/report-text';
import { Inject, Injectable } from '@nestjs/common';
import { DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, DURABLE_WRITES, ROUTE_STORE, routeDelayType } from '../distributed-queue.constants';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { checkedTypeOf, type TaskContract } from '../contracts/task-contract';
import { InvalidArgumentError, RedisOutOfMemoryError, RouteNotConfiguredError } from '../errors';
import { quote } from '../errors/quote';
import type { CallOptions, DeadTask, ListOptions, PageOptions, TaskPage, OrderedDeadTask, RouteStatus, TaskActivity, TaskCounts, TaskInfo, TaskState } from '../interfaces';
import { EventStreams } from '../events/event-streams';
import { DelayQueueStore } from '../delay/delay-queue.store';
import { decodeError, decodeRecord } from '../delay/task-codec';
import { readOrderedDead, readRouteStatus, redriveOrderedDead } from '../route/route-status';
import type { RouteStore } from '../route/route.store';
import { RouteControlStore } from '../route/route-control.store';
import { listOrderedDelayedAfter, listOrderedTasks } from '../route/route-listing';
import { cursorAt, decodeCursor, encodeCursor } from './list-cursor';
import { isOrderedType } from './type-kind';
import { newRequestId } from '../runtime/request-id';
import { checkId, checkIds, checkLimit, checkOffset, checkTypeNames, checkWindowMs } from './task-input';
import { callDurability, type ResolvedDurability } from '../options/resolve-durability';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import type { DurableWrites, WriteMark } from '../redis/durable-writes';

/** A task as the inspector shows it, from its record (attempts, due time, payload) when there is one. */
function taskInfo<P>(id: string, type: string, state: TaskState, record: string | null, due: number | null, attempt: number | null): TaskInfo<P> {
  const info: TaskInfo<P> = { id, type, state };
  const decoded = record ? decodeRecord(record, due ?? 0) : null;
  if (decoded) {
    info.attempts = attempt ?? decoded.attempts;
    info.dueAt = decoded.dueAt;
    if (decoded.priority > 0) info.priority = decoded.priority;
    if (decoded.expireAt !== undefined) info.expireAt = decoded.expireAt;
    info.payload = parseJson(decoded.payload) as P;
  }
  return info;
}

const LISTED_STATES: TaskState[] = ['delayed', 'ready', 'running', 'dead', 'done'];

/** The most dead letters one call re-drives or deletes by id: one bounded script call. */
const MAX_DEAD_IDS = 1000;

/** Checks the ids of a dead-letter call: an array of at most `MAX_DEAD_IDS` task ids. @throws InvalidArgumentError */
function checkDeadIds(ids: unknown): string[] {
  const checked = checkIds(ids);
  if (checked.length > MAX_DEAD_IDS) throw new InvalidArgumentError('ids', `at most ${MAX_DEAD_IDS} ids a call, got ${checked.length}`);
  return checked;
}

function checkPage(state: TaskState, limit: number): void {
  if (!LISTED_STATES.includes(state)) throw new InvalidArgumentError('state', `must be one of ${LISTED_STATES.join(', ')}, got ${quote(state)}`);
  checkLimit(limit);
}

function parseJson(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

/**
 * Looks into the queues (task state, route ownership) and handles dead letters. Injectable anywhere. Every
 * `type` is a type string or a (not ordered) contract from `defineTask`, which types the payloads returned.
 */
@Injectable()
export class TaskInspectorService {
  /** @internal Nest creates it (dependency injection): inject the class, do not construct it. */
  constructor(
    private readonly store: DelayQueueStore,
    private readonly explorer: DistributedQueueExplorer,
    @Inject(ROUTE_STORE) private readonly routeStore: RouteStore | null,
    @Inject(RouteControlStore) private readonly routeControl: RouteControlStore | null,
    private readonly streams: EventStreams,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Inject(DURABLE_WRITES) private readonly durable: DurableWrites | null,
  ) {}

  /**
   * How many tasks of a type are delayed, ready, running, dead and recently done: O(1) in Redis, plus one
   * count per chunk of 128 waiting tasks that holds ready ones. For an ordered type, the counts of its route
   * queue (all its ordered types), with each partition's.
   */
  async getCounts(type: string | TaskContract<unknown, boolean>): Promise<TaskCounts> {
    const name = checkedTypeOf(type);
    if (!this.isOrdered(type)) return this.store.counts(name);
    const route = this.route('getCounts() of an ordered type');
    const [status, waiting] = await Promise.all([readRouteStatus(route), this.store.counts(routeDelayType(route.options.qId))]);
    const partitions = status.partitions.map((p) => ({ partition: p.partition, ready: p.waiting, running: p.inFlight, dead: p.dead }));
    const sum = (key: 'ready' | 'running' | 'dead'): number => partitions.reduce((total, p) => total + p[key], 0);
    // NOTE: a delayed ordered task waits in the delay queue until due, then enters its partition.
    return { delayed: waiting.delayed + waiting.ready, ready: sum('ready'), running: sum('running'), dead: sum('dead'), done: 0, partitions };
  }

  /**
   * getCounts() of several types, by type name: the route queue is read once for all its ordered types
   * (they share its counts), where a call per type would read every partition again.
   */
  async getCountsOf(types: readonly (string | TaskContract<unknown, boolean>)[]): Promise<Map<string, TaskCounts>> {
    const names = checkTypeNames(types);
    let route: Promise<TaskCounts> | undefined;
    const counts = await Promise.all(types.map((type) => (this.isOrdered(type) ? (route ??= this.getCounts(type)) : this.getCounts(type))));
    return new Map(names.map((name, i) => [name, counts[i]]));
  }

  /**
   * One page of a delay-queue type's tasks in a state: waiting ones by due time (then submission), running
   * ones by lease, dead ones oldest death first, done ones newest first; a page past the end is empty.
   * Running, dead and done: O(log n + limit) in Redis. Delayed and ready: the waiting set is kept in chunks
   * of 128 tasks by submission, so a page in due order is a merge, read in bounded steps (no call blocks
   * Redis, at any size; see `listTaskPage`), and `offset` tasks are skipped by walking pages: O(offset)
   * work spread over steps. To browse deep, use `listTaskPage`, whose cursor spares the walk.
   *
   * For an ordered type, the tasks of its route queue, which all its ordered types share: each TaskInfo
   * carries the task's own `type`, its `key` and `partition`. Partitions are paged in order (each: waiting
   * ones in queue order, running ones, the in-flight batch, by seq, dead ones oldest first) from their
   * lengths, in O(partitions + limit); `delayed` lists the queue's delayed ordered tasks by due time;
   * `done` is always empty (the route queue keeps no finished tasks).
   * @throws InvalidArgumentError for a bad state, offset or limit
   */
  async listTasks<P = unknown>(
    type: string | TaskContract<P, boolean>, state: Exclude<TaskState, 'unknown' | 'pending'>, page: ListOptions = {},
  ): Promise<TaskInfo<P>[]> {
    const name = checkedTypeOf(type);
    const { offset = 0, limit = 100 } = page ?? {};
    checkPage(state, limit);
    checkOffset(offset);
    return this.listAt<P>(type, state, offset, limit);
  }

  /** listTasks() without checks (a page of listTaskPage asks for one task more, to know whether one follows). */
  private async listAt<P>(type: string | TaskContract<P, boolean>, state: Exclude<TaskState, 'unknown' | 'pending'>, offset: number, limit: number): Promise<TaskInfo<P>[]> {
    const name = checkedTypeOf(type);
    if (this.isOrdered(type)) {
      if (!this.routeControl) throw new RouteNotConfiguredError('listTasks() of an ordered type');
      return state === 'done' ? [] : ((await listOrderedTasks(this.routeControl, this.store, state, offset, limit)) as TaskInfo<P>[]);
    }
    if (state === 'dead') {
      const { tasks } = await this.deadAt<P>(name, offset, limit);
      return tasks.map(({ id, payload, error }) => ({ id, type: name, state, attempts: error.attempts, payload, lastError: error }));
    }
    const rows = await this.store.list(name, state, offset, limit);
    return rows.map(({ id, due, record, attempt }) => taskInfo<P>(id, name, state, record, due, attempt));
  }

  /**
   * One page of a type's tasks in a state, as `listTasks` orders them, from a cursor: `next` is the
   * cursor of the page after (null when no task follows this page's). Waiting tasks (delayed, ready, and an
   * ordered type's delayed ones) are paged by position (after the due time and submission of the last
   * task shown), so a page never walks the tasks before it: the chunks of the waiting set whose
   * earliest due time comes before the page's last task are merged in bounded steps (at most 64 chunks
   * of 128 tasks and about 1,000 tasks returned per call; other clients' commands run between steps). Other states page by offset in
   * O(log n + limit) (route partitions: O(partitions + limit)). Tasks that move while pages are read may
   * be skipped or shown twice, as in any live listing.
   * @throws InvalidArgumentError for a bad state or limit, or a cursor that is not one of this state's
   */
  async listTaskPage<P = unknown>(
    type: string | TaskContract<P, boolean>, state: Exclude<TaskState, 'unknown' | 'pending'>, page: PageOptions = {},
  ): Promise<TaskPage<P>> {
    const name = checkedTypeOf(type);
    const { cursor, limit = 100 } = page ?? {};
    checkPage(state, limit);
    const ordered = this.isOrdered(type);
    const waiting = state === 'delayed' || (state === 'ready' && !ordered);
    const from = decodeCursor(cursor, state, waiting);
    if (!waiting) {
      const offset = from && 'offset' in from ? from.offset : 0;
      const tasks = await this.listAt<P>(type, state, offset, limit + 1);
      return { tasks: tasks.slice(0, limit), next: tasks.length > limit ? encodeCursor({ state, offset: offset + limit }) : null };
    }
    const after = from && 'after' in from ? from.after : null;
    let rows: { task: TaskInfo<P>; at: { due: number; seq: number } }[];
    if (ordered) {
      if (!this.routeControl) throw new RouteNotConfiguredError('listTaskPage() of an ordered type');
      rows = (await listOrderedDelayedAfter(this.routeControl, this.store, after, limit + 1)) as typeof rows;
    } else {
      const listed = await this.store.waitingPage(name, state as 'ready' | 'delayed', after, limit + 1);
      rows = listed.map((row) => ({ task: taskInfo<P>(row.id, name, state, row.record, row.due, null), at: cursorAt(row) }));
    }
    const shown = rows.slice(0, limit);
    return { tasks: shown.map((r) => r.task), next: rows.length > limit ? encodeCursor({ state, after: shown[shown.length - 1].at }) : null };
  }

  /** The task's state: delayed, ready, running, done (among the last `keepDone`), dead or unknown. */
  async getState(type: string | TaskContract<unknown>, id: string): Promise<TaskState> {
    return (await this.getTask(type, id)).state;
  }

  /** The task's state with its record (attempts, due time, payload, last error). */
  async getTask<P = unknown>(typeOrContract: string | TaskContract<P>, id: string): Promise<TaskInfo<P>> {
    const type = checkedTypeOf(typeOrContract);
    const { state, record, error, due, attempt, leaseExpiresAt, leaseHolder, result, logs, progress } = await this.store.get(type, checkId(id));
    const info = taskInfo<P>(id, type, state, record, due, attempt);
    info.lastError = decodeError(error);
    if (leaseExpiresAt !== null) info.leaseExpiresAt = leaseExpiresAt;
    if (leaseHolder !== null) info.leaseHolder = leaseHolder;
    const kept = readResult(result);
    if ('notKept' in kept) info.resultNotKept = kept.notKept;
    else if (kept.value !== undefined) info.result = kept.value;
    const reported = readProgress(progress);
    if (reported) info.progress = reported.value;
    const lines = readLogs(logs);
    if (lines) {
      info.logs = lines.lines;
      if (lines.dropped > 0) info.logsDropped = lines.dropped;
    }
    return info;
  }

  /**
   * Dead letters of a type, oldest first: O(log n + limit) at any offset.
   * @default offset 0, limit 100
   * @throws InvalidArgumentError for an offset that is not an integer from 0, or a limit not from 1 to 1000
   */
  async listDead<P = unknown>(
    typeOrContract: string | TaskContract<P>,
    offset = 0,
    limit = 100,
  ): Promise<{
    /** Dead letters of the type. */
    total: number;
    /** The page's dead letters, oldest first. */
    tasks: DeadTask<P>[];
  }> {
    const type = checkedTypeOf(typeOrContract);
    checkOffset(offset);
    checkLimit(limit);
    return this.deadAt<P>(type, offset, limit);
  }

  /** listDead() without checks (a page of listTaskPage asks for one task more, to know whether one follows). */
  private async deadAt<P>(type: string, offset: number, limit: number): Promise<{ total: number; tasks: DeadTask<P>[] }> {
    const { total, items } = await this.store.deadList(type, offset, limit);
    const tasks = items.map(({ id, diedAt, record, error }) => {
      const decoded = record ? decodeRecord(record) : null;
      const dead: DeadTask<P> = {
        id, type, diedAt,
        error: decodeError(error) ?? { name: 'Error', message: 'unknown', attempts: 0, failedAt: diedAt },
      };
      const payload = decoded ? parseJson(decoded.payload) : undefined;
      if (payload !== undefined) dead.payload = payload as P;
      else if (record) dead.raw = record;
      return dead;
    });
    return { total, tasks };
  }

  /**
   * Puts dead tasks back to run now with their attempts reset: the given ids, or when none are given the
   * oldest `limit`. Corrupt records stay dead. Returns how many were re-driven. `options.durability`: this
   * call's (see the module option). @default limit 100
   * @throws InvalidArgumentError for ids that are not an array (or more than 1,000 of them) or a limit not from
   * 1 to 1000; InvalidSubmitOptionsError for a bad id; DurabilityError (its `result`: how many were re-driven on
   * the master)
   */
  async redriveDead(typeOrContract: string | TaskContract<unknown>, ids: string[] = [], limit = 100, options?: CallOptions): Promise<number> {
    const type = checkedTypeOf(typeOrContract);
    const checked = checkDeadIds(ids);
    checkLimit(limit);
    const durability = this.durabilityOf(options);
    const redrive = (store: DelayQueueStore): Promise<number> => store.redrive(type, checked, limit, newRequestId());
    if (!durability) return redrive(this.store);
    const marks: WriteMark[] = [];
    return this.durable!.confirmed(marks, durability, await this.durable!.delayWrite(marks, type, redrive));
  }

  /**
   * Deletes dead tasks for good. Returns how many were deleted.
   * @throws InvalidArgumentError for ids that are not an array (or more than 1,000 of them); InvalidSubmitOptionsError for a bad id
   */
  async deleteDead(typeOrContract: string | TaskContract<unknown>, ids: string[]): Promise<number> {
    const type = checkedTypeOf(typeOrContract);
    const checked = checkDeadIds(ids);
    if (checked.length === 0) return 0;
    return this.store.deleteDead(type, checked);
  }

  /** The route queue's partitions (owner, epoch, waiting, in flight, dead) and live machines. */
  async getRouteStatus(): Promise<RouteStatus> {
    return readRouteStatus(this.route('getRouteStatus()'));
  }

  /**
   * Dead letters of the route queue (at most `limit` per partition, oldest first). @default limit 100
   * @throws InvalidArgumentError for a limit not from 1 to 1000
   */
  async listOrderedDead(limit = 100): Promise<OrderedDeadTask[]> {
    checkLimit(limit);
    return readOrderedDead(this.route('listOrderedDead()'), limit);
  }

  /**
   * Re-drives the route queue's dead letters (the oldest `limit` per partition): each goes back to the tail
   * of its key's partition, behind what is queued now. Unreadable ones are dropped. Returns how many.
   * `options.durability`: this call's (see the module option). @default limit 100
   * @throws InvalidArgumentError for a limit not from 1 to 1000; DurabilityError (its `result`: how many were
   * re-driven on the master)
   */
  async redriveOrderedDead(limit = 100, options?: CallOptions): Promise<number> {
    checkLimit(limit);
    const store = this.route('redriveOrderedDead()');
    const durability = this.durabilityOf(options);
    if (!durability) return redriveOrderedDead(store, limit);
    const durable = this.durable!;
    const marks: WriteMark[] = [];
    const count = await redriveOrderedDead(durable.routeStore!, limit, async (p, call) => {
      const { value, mark } = await durable.write(durable.routeStore!.keys.partition(p).list, call);
      marks.push(mark);
      return value;
    });
    return durable.confirmed(marks, durability, count);
  }

  /** A call's durability, checked (before anything is written); null when it is not durable. */
  private durabilityOf(options: CallOptions | undefined): ResolvedDurability | null {
    return callDurability(options?.durability, this.options.durability ?? null, this.options.redisTimeoutMs);
  }

  /** The task types this application knows (its workers' and those in `types`), with whether each is ordered. */
  listTypes(): {
    /** The task type. */
    type: string;
    /** Whether it is an ordered type (route queue). */
    ordered: boolean;
  }[] {
    return this.explorer.knownTypes().map((type) => ({ type, ordered: this.explorer.isOrdered(type) }));
  }

  /**
   * What happened to a type's tasks in the last `windowMs` (Redis clock), counted from its event stream:
   * completed, failed attempts, retries, dead letters, cancels, recoveries. Completions are logged only while
   * the stream is followed: a call asks for them for the next 30 s, so a dashboard that polls sees them all
   * from its second minute on. Needs `events.stream` (else every count is 0). O(events in the window), at
   * most the newest 10,000 entries per stream read (older ones in the window are not counted).
   * @default windowMs 60000
   */
  async getActivity(typeOrContract: string | TaskContract<unknown, boolean>, windowMs = 60_000): Promise<TaskActivity> {
    const type = checkedTypeOf(typeOrContract);
    return (await this.getActivityOf([type], windowMs)).get(type)!;
  }

  /**
   * getActivity() of several types, by type name: each stream is read once (the route queue's partition
   * streams hold all its ordered types).
   * @default windowMs 60000
   */
  async getActivityOf(types: readonly (string | TaskContract<unknown, boolean>)[], windowMs = 60_000): Promise<Map<string, TaskActivity>> {
    const names = checkTypeNames(types);
    checkWindowMs(windowMs);
    const streams = await this.streams.ofTypes(names);
    // NOTE: raising the flags (so that the scripts log what is counted from the next minute on) is a write: a
    // server out of memory refuses it, the read goes on (the dashboard's overview asks for it).
    const raised = this.streams.raiseFlags(streams).catch((error: unknown) => {
      if (!(error instanceof RedisOutOfMemoryError)) throw error;
    });
    const [now] = await Promise.all([this.streams.now(), raised]);
    const counts = await this.streams.recentCounts(streams, now - windowMs);
    return new Map(names.map((type) => [type, { windowMs, counts: counts.get(type) ?? {} }]));
  }

  private isOrdered(type: string | TaskContract<unknown, boolean>): boolean {
    return isOrderedType(this.explorer, type);
  }

  private route(call: string): RouteStore {
    if (!this.routeStore) throw new RouteNotConfiguredError(call);
    return this.routeStore;
  }
}
