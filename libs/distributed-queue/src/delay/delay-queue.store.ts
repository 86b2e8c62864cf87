import { hostname } from 'os';
import { keptError } from '../runtime/error-stack';
import { DeliveryFailedError } from '../errors/delivery-failed.error';
import { LimitsStore } from './limits.store';
import { GroupsStore } from './groups.store';
import { ReportsStore } from './reports.store';
import { delayQueueKeys, type DelayQueueKeys } from '../redis/queue-keys';
import { REQUEST_TTL_MS, requestBucket } from '../runtime/request-id';
import { decodeError, decodeLease, withoutSeqTag } from './task-codec';
import { cancelOutcome, failOutcome, type FailOutcome } from '../redis/script-outcome';
import type { RedisClient } from '../redis/script-loader';
import type { CancelResult, TaskCounts, TaskState } from '../interfaces';
import { queuePage, waitingSlice, type WaitingCursor, type WaitingRange, type WaitingRow } from './waiting-page';
import type { Due, DedupeOutcome, ListedTask, NewTask, Reservation, TakeOptions, TakeResult, TaskDedupe } from './delay-queue.types';

// NOTE: the store's shapes live in delay-queue.types.ts; importers keep importing them from here.
export type { Due, DedupeOutcome, ListedTask, NewTask, Reservation, TakeOptions, TakeResult, TaskDedupe } from './delay-queue.types';

type Arg = string | number;
type Reply = unknown;
/** The scripts of `scripts/`, as `defineScripts` adds them to the client. */
interface ScriptCommands {
  dqDelaySubmit(...args: Arg[]): Promise<[number, ...(string | number)[]]>;
  dqDelayDedupe(...args: Arg[]): Promise<[string, string]>;
  dqDelayTake(...args: Arg[]): Promise<[number, number, string[], string, ...Arg[]]>;
  dqDelayFail(...args: Arg[]): Promise<number>;
  dqDelayRelease(...args: Arg[]): Promise<number>;
  dqDelayExtend(...args: Arg[]): Promise<string[]>;
  dqDelayCancel(...args: Arg[]): Promise<number>;
  dqDelayReschedule(...args: Arg[]): Promise<number>;
  dqDelayGet(...args: Arg[]): Promise<[TaskState, string | null, string | null, string | null, string | null, string | null, string | null]>;
  dqDelayDeadList(...args: Arg[]): Promise<Reply[]>;
  dqDelayDeadRedrive(...args: Arg[]): Promise<number>;
  dqDelayDeadDelete(...args: Arg[]): Promise<number>;
  dqDelayCounts(...args: Arg[]): Promise<number[]>;
  dqDelayPrioritySet(...args: Arg[]): Promise<number>;
  dqDelayCountReady(...args: Arg[]): Promise<number[]>;
  dqDelayList(...args: Arg[]): Promise<[number, ...(string | null)[]]>;
  dqDelayPresence(...args: Arg[]): Promise<number>;
}

/** Who takes tasks from this process, as reservations record it (host/pid). */
const HOLDER = `${hostname()}/${process.pid}`;

function dueArgs(due: Due, priority?: number, deadline?: Due): Arg[] {
  let spec = priority === undefined ? '' : String(priority);
  if (deadline) spec += 'at' in deadline ? `x${Math.floor(deadline.at)}` : `y${Math.floor(deadline.delay)}`;
  return 'at' in due ? [`a${spec}`, Math.floor(due.at)] : [`d${spec}`, Math.floor(due.delay)];
}

/** Thin typed layer over the delay-queue scripts: one method per script, keys built per type. */
export class DelayQueueStore {
  private readonly keyCache = new Map<string, DelayQueueKeys>();

  /**
   * @param streamMaxLen entries kept in each type's event stream; 0 writes no events.
   */
  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
    private readonly streamMaxLen = 0,
  ) {}

  private limitsStore?: LimitsStore;

  private get scripts(): ScriptCommands {
    return this.client as unknown as ScriptCommands;
  }

  /** The groups of the types (fair share per group). */
  get groups(): GroupsStore {
    return (this.groupsStore ??= new GroupsStore(this.client, this.prefix));
  }

  private groupsStore?: GroupsStore;

  /** What running tasks report: progress and log lines. */
  get reports(): ReportsStore {
    return (this.reportsStore ??= new ReportsStore(this.client, this.prefix, this.streamMaxLen));
  }

  private reportsStore?: ReportsStore;

  /** The types' fleet-wide limits (rate limit, concurrency). */
  get limits(): LimitsStore {
    return (this.limitsStore ??= new LimitsStore(this.client, this.prefix));
  }

  /** Key names of a type (cached). */
  keys(type: string): DelayQueueKeys {
    let keys = this.keyCache.get(type);
    if (!keys) {
      keys = delayQueueKeys(this.prefix, type);
      this.keyCache.set(type, keys);
    }
    return keys;
  }

  /**
   * Adds tasks (at most ~1000 per call); returns each one's id (generated for id '') and whether it was
   * created. `requestId` names the call: a repeat within `REQUEST_TTL_MS` (60 s; a re-send after a lost reply)
   * returns the first call's reply and writes nothing.
   */
  async submit(type: string, tasks: NewTask[], requestId: string): Promise<{ id: string; created: boolean }[]> {
    const k = this.keys(type);
    const args: Arg[] = [k.waiting, k.jobs, k.seq, k.requests(requestBucket(requestId)), k.log, k.recorded, k.limits, k.events, REQUEST_TTL_MS, this.streamMaxLen, requestId];
    for (const task of tasks) args.push(task.id, ...dueArgs(task.due, task.priority, task.deadline), task.group ?? '', task.payload);
    const [, ...flat] = await this.scripts.dqDelaySubmit(...args);
    const out = [];
    for (let i = 0; i < flat.length; i += 2) out.push({ id: String(flat[i]), created: flat[i + 1] === 1 });
    return out;
  }

  /**
   * Submits one task under a dedupe key: added unless a task of the key stands or its window runs; else
   * what `dedupe.mode` says (see dedupe-11.lua). Returns the standing task's id and what happened. A repeat
   * with the same `requestId` returns the first call's reply.
   */
  async dedupe(type: string, task: NewTask, dedupe: TaskDedupe, requestId: string): Promise<{ id: string; outcome: DedupeOutcome }> {
    const k = this.keys(type);
    const [id, outcome] = await this.scripts.dqDelayDedupe(
      k.waiting, k.jobs, k.seq, k.requests(requestBucket(requestId)), k.log, k.recorded, k.limits, k.dedupe, k.dedupeIndex, k.active, k.dead,
      k.events, REQUEST_TTL_MS, this.streamMaxLen, requestId, dedupe.key, dedupe.mode, dedupe.ttlMs,
      task.id, ...dueArgs(task.due, task.priority, task.deadline), task.group ?? '', task.payload,
    );
    return { id: String(id), outcome: outcome as DedupeOutcome };
  }

  /**
   * Acks finished tasks and reserves up to `count` due ones. `consumer` names the calling consumer (its
   * request key) and `requestId` this call: a repeat with the same id (a re-send or a retry after an error)
   * returns the first call's reservations again.
   */
  async take(type: string, options: TakeOptions, acks: [string, string][], consumer: string, requestId: string): Promise<TakeResult> {
    const k = this.keys(type);
    const args: Arg[] = [k.waiting, k.active, k.jobs, k.dead, k.errors, k.done, k.running, k.lane(consumer), k.paused, k.log, k.followed, k.recorded, k.legacyWaiting, k.limits, k.results];
    args.push(options.count, options.leaseMs, options.maxAttempts, options.keepDone, options.recoverLimit, k.events, requestId, this.streamMaxLen, HOLDER);
    for (const [id, token] of acks) args.push(id, token);
    const [now, nextDueIn, refused, stamp, ...flat] = await this.scripts.dqDelayTake(...args);
    const reserved: Reservation[] = [];
    for (let i = 0; i < flat.length; i += 4) {
      const due = String(flat[i + 2]);
      reserved.push({
        id: String(flat[i]),
        attempt: Number(flat[i + 1]),
        // the reservation string the script stored (see take-15.lua): the token acks and renewals carry
        token: `${stamp}:${flat[i + 1]}:${due}:${HOLDER}`,
        dueAt: Number(due),
        payload: withoutSeqTag(String(flat[i + 3])),
      });
    }
    return { now: Number(now), nextDueIn: Number(nextDueIn), refused, reserved };
  }

  /**
   * Retries (`retryDelayMs` >= 0) or buries (-1) a failed reservation. `error.instance` (service mode): the
   * instance the failed delivery went to, kept with the error in the same script (see `lastFailedOn`).
   * `stack` (bounded by the caller, see `stackOf`) is kept with the error and in its event entry.
   */
  async fail(type: string, id: string, token: string, retryDelayMs: number, error: Error, stack?: string): Promise<FailOutcome> {
    const kept = keptError(error);
    const k = this.keys(type);
    // NOTE: service mode keeps the failed delivery's instance with the error: the retry avoids it.
    const instance = error instanceof DeliveryFailedError ? error.instance : '';
    const code = await this.scripts.dqDelayFail(
      k.waiting, k.active, k.jobs, k.dead, k.errors, k.running, k.log, id, token, retryDelayMs, kept.name, kept.message, k.events, this.streamMaxLen, instance,
      stack ?? '',
    );
    return failOutcome(code);
  }

  /** Service mode: the instance the task's last recorded failure was on (every scheduler replica reads the same), or null. */
  async lastFailedOn(type: string, id: string): Promise<string | null> {
    const instance = decodeError(await this.client.hget(this.keys(type).errors, id))?.instance;
    return typeof instance === 'string' ? instance : null;
  }

  /** Hands reservations back without counting the attempt. */
  release(type: string, reservations: [string, string][]): Promise<number> {
    const k = this.keys(type);
    return this.scripts.dqDelayRelease(k.waiting, k.active, k.jobs, k.running, k.events, ...reservations.flat());
  }

  /** Renews leases; returns the ids whose reservation is lost. */
  extend(type: string, leaseMs: number, reservations: [string, string][]): Promise<string[]> {
    const k = this.keys(type);
    return this.scripts.dqDelayExtend(k.active, k.running, leaseMs, ...reservations.flat());
  }

  async cancel(type: string, id: string): Promise<CancelResult> {
    const k = this.keys(type);
    return cancelOutcome(await this.scripts.dqDelayCancel(k.waiting, k.active, k.jobs, k.errors, k.log, id, k.events, this.streamMaxLen));
  }

  /** Returns the new due time, or null when the task is not waiting. */
  async reschedule(type: string, id: string, due: Due): Promise<number | null> {
    const k = this.keys(type);
    const result = Number(await this.scripts.dqDelayReschedule(k.waiting, k.jobs, k.log, k.recorded, id, ...dueArgs(due), k.events, this.streamMaxLen));
    return result < 0 ? null : result;
  }

  /** Sets a waiting task's priority; returns the one it had, or null when the task is not waiting. */
  async changePriority(type: string, id: string, priority: number): Promise<number | null> {
    const k = this.keys(type);
    const before = Number(await this.scripts.dqDelayPrioritySet(k.waiting, k.jobs, k.limits, id, priority, k.events));
    return before < 0 ? null : before;
  }

  /**
   * A task's state, record, last error, due time (the score while waiting, the reserved due time while
   * running), and for a running task the attempt it is on.
   */
  async get(
    type: string,
    id: string,
  ): Promise<{
    state: TaskState;
    record: string | null;
    error: string | null;
    due: number | null;
    attempt: number | null;
    leaseExpiresAt: number | null;
    leaseHolder: string | null;
    /** A finished task's kept result (see results.lua), else null. */
    result: string | null;
    /** Its log lines and a running attempt's progress (see task-logs.lua), else null. */
    logs: string | null;
    progress: string | null;
  }> {
    const k = this.keys(type);
    const [state, record, error, score, lease, logs, progress] = await this.scripts.dqDelayGet(k.waiting, k.active, k.jobs, k.dead, k.errors, k.done, k.running, id);
    const reservation = decodeLease(lease);
    const due = state === 'running' ? reservation.due : score ? Number(score) : null;
    const leaseExpiresAt = state === 'running' && score ? Number(score) : null;
    // NOTE: a second read for a finished task only: its result stays while its id is in `done`.
    const result = state === 'done' ? await this.result(type, id) : null;
    return { state, record: record || null, error: error || null, due, attempt: reservation.attempt, leaseExpiresAt, leaseHolder: reservation.holder, result, logs: logs || null, progress: progress || null };
  }

  /**
   * Raises the flag that makes the type's scripts publish its tasks' ends on `channel` (see awaiting.lua),
   * for `ttlMs`.
   */
  async raiseWaitersFlag(type: string, channel: string, ttlMs: number): Promise<void> {
    await this.client.set(this.keys(type).awaited, channel, 'PX', ttlMs);
  }

  /** The kept result of a finished task (see results.lua): its text, or null (none kept, or not finished). */
  result(type: string, id: string): Promise<string | null> {
    return this.client.hget(this.keys(type).results, id);
  }

  async deadList(type: string, offset: number, limit: number): Promise<{ total: number; items: { id: string; diedAt: number; record: string | null; error: string | null }[] }> {
    const k = this.keys(type);
    const [total, ...flat] = await this.scripts.dqDelayDeadList(k.dead, k.jobs, k.errors, offset, limit);
    const items = [];
    for (let i = 0; i < flat.length; i += 4) {
      items.push({
        id: String(flat[i]),
        diedAt: Number(flat[i + 1]),
        record: flat[i + 2] ? String(flat[i + 2]) : null,
        error: flat[i + 3] ? String(flat[i + 3]) : null,
      });
    }
    return { total: Number(total), items };
  }

  /**
   * Re-drives the given dead ids, or the oldest `limit` when none are given.
   * NOTE: the oldest are picked first and then re-driven by id; a re-sent call (same `requestId`) returns
   * the first call's count and re-drives nothing twice.
   */
  async redrive(type: string, ids: string[], limit: number, requestId: string): Promise<number> {
    const k = this.keys(type);
    const picked = ids.length > 0 ? ids : await this.client.zrange(k.dead, 0, String(limit - 1));
    if (picked.length === 0) return 0;
    return this.scripts.dqDelayDeadRedrive(k.dead, k.waiting, k.jobs, k.errors, k.requests(requestBucket(requestId)), k.events, REQUEST_TTL_MS, requestId, ...picked);
  }

  deleteDead(type: string, ids: string[]): Promise<number> {
    const k = this.keys(type);
    return this.scripts.dqDelayDeadDelete(k.dead, k.jobs, k.errors, ...ids);
  }

  /**
   * A type's tasks by state; `done` counts the remembered finished ids (at most keepDone). O(log n), plus
   * one count per chunk of the waiting set holding ready tasks, 256 chunks per script call (a backlog of
   * 1,000,000 ready tasks: 31 short calls, not one long one).
   */
  async counts(type: string): Promise<TaskCounts> {
    const k = this.keys(type);
    const [now, total, readyFirst, running, dead, done, firstRank, ...byPriority] = (await this.scripts.dqDelayCounts(k.waiting, k.active, k.dead, k.done)).map(Number);
    let ready = readyFirst;
    for (let rank = firstRank; rank >= 0; ) {
      const [more, next] = (await this.scripts.dqDelayCountReady(k.waiting, now, rank)).map(Number);
      ready += more;
      rank = next;
    }
    const counts: TaskCounts = { delayed: Math.max(0, total - ready), ready, running, dead, done };
    if (byPriority.length > 0) {
      // the levels above 0 are counted as tasks come and go; level 0 holds the rest
      const priorities: Record<string, number> = {};
      let prioritized = 0;
      for (let i = 0; i < byPriority.length; i += 2) {
        priorities[byPriority[i]] = byPriority[i + 1];
        prioritized += byPriority[i + 1];
      }
      counts.priorities = { '0': Math.max(0, total - prioritized), ...priorities };
    }
    return counts;
  }

  /**
   * One page of a type's tasks in a state other than dead (see `deadList`), earliest due first. Waiting
   * (ready, delayed, or 'all' of them) ones are read in bounded steps, `offset` skipped by pages (see `waitingSlice`); running
   * and done ones in O(log n + limit).
   */
  async list(type: string, state: WaitingRange | 'running' | 'done', offset: number, limit: number): Promise<ListedTask[]> {
    const k = this.keys(type);
    if (state !== 'running' && state !== 'done') return this.withRecords(type, await waitingSlice(this.client, k.waiting, state, offset, limit));
    const [, ...flat] = await this.scripts.dqDelayList(k.waiting, k.active, k.jobs, k.done, k.running, state, offset, limit);
    const out: ListedTask[] = [];
    for (let i = 0; i < flat.length; i += 4) {
      out.push({
        id: String(flat[i]),
        due: flat[i + 1] ? Number(flat[i + 1]) : null,
        record: flat[i + 2] ? String(flat[i + 2]) : null,
        attempt: decodeLease(flat[i + 3]).attempt,
      });
    }
    return out;
  }

  /**
   * The first `limit` waiting tasks of a range after the cursor (null: from the start), in (due,
   * submission) order, with their records: one page read in bounded steps (see `waitingPage`).
   */
  async waitingPage(type: string, range: WaitingRange, after: WaitingCursor | null, limit: number): Promise<(ListedTask & WaitingRow)[]> {
    return this.withRecords(type, await queuePage(this.client, this.keys(type).waiting, range, after, limit));
  }

  private async withRecords(type: string, rows: WaitingRow[]): Promise<(ListedTask & WaitingRow)[]> {
    if (rows.length === 0) return [];
    const records = await this.client.hmget(this.keys(type).jobs, ...rows.map((r) => r.id));
    return rows.map((row, i) => ({ ...row, record: records[i], attempt: null }));
  }

  /** Pauses or resumes a type for the whole fleet; a resume wakes the workers. */
  async setPaused(type: string, paused: boolean): Promise<void> {
    const k = this.keys(type);
    if (paused) {
      await this.client.set(k.paused, '1');
      return;
    }
    await this.client.del(k.paused);
    await this.client.publish(k.events, 'w:0');
  }

  /** Whether a type is paused. */
  async isPaused(type: string): Promise<boolean> {
    return (await this.client.exists(this.keys(type).paused)) === 1;
  }

  /** Records a consumer of the type as live for `ttlMs` more (what `obliterate` checks before it deletes). */
  async touchPresence(type: string, consumer: string, ttlMs: number): Promise<void> {
    await this.scripts.dqDelayPresence(this.keys(type).consumers, consumer, ttlMs);
  }

  /** A stopping consumer is no longer live. */
  async leavePresence(type: string, consumer: string): Promise<void> {
    await this.client.zrem(this.keys(type).consumers, consumer);
  }
}
