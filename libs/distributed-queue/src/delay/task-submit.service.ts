import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'crypto';
import { DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, ROUTE_STORE, routeDelayType } from '../distributed-queue.constants';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { InvalidSubmitOptionsError, PartitionFullError, UnknownTaskTypeError } from '../errors';
import type {
  CancelResult, DeadTask, OrderedDeadTask, OrderedSubmitItem, OrderedSubmitOptions, OrderedSubmitResult, RouteStatus, SubmitItem,
  SubmitOptions, SubmitResult, TaskInfo, TaskState,
} from '../interfaces';
import { encodeRouteItem, RouteProducer } from '../route/route-producer';
import { readOrderedDead, readRouteStatus, redriveOrderedDead } from '../route/route-status';
import type { RouteStore } from '../route/route.store';
import { assertTaskType, type ResolvedModuleOptions } from '../options/resolve-options';
import { DelayQueueStore, type Due, type NewTask } from './delay-queue.store';
import { decodeError, decodeRecord, encodePayload } from './task-codec';

/** Tasks per submit script call: bounds the time one call holds Redis. */
const SUBMIT_CHUNK = 500;
const SUBMIT_KEYS = ['id', 'delay', 'runAt', 'payload'];

function newId(): string {
  return randomBytes(12).toString('base64url');
}

/** This process's part of generated delay-queue ids: 48 random bits. */
const ID_TAG = randomBytes(6).toString('base64url');
let idCounter = 0;

/**
 * A generated delay-queue id: `#<process tag (8 characters)><counter>`. Made here, not in Redis, so that a submit re-sent
 * after a lost reply finds its tasks by id instead of creating them again.
 */
function generateTaskId(): string {
  return `#${ID_TAG}${(idCounter++).toString(36)}`;
}

function parseJson(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

/** Submits, cancels, reschedules and inspects tasks; manages dead letters. Injectable anywhere. */
@Injectable()
export class TaskSubmitService {
  private readonly producer?: RouteProducer;

  constructor(
    private readonly store: DelayQueueStore,
    private readonly explorer: DistributedQueueExplorer,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Inject(ROUTE_STORE) private readonly routeStore: RouteStore | null,
  ) {
    if (routeStore) this.producer = new RouteProducer(routeStore);
  }

  /**
   * Submits an ordered task: all tasks of one `key` run one after another in submission order, different
   * keys in parallel. With `delay`/`runAt` it waits in the delay queue and enters its partition when due.
   * The result tells what the partition did (`queued`, `discarded`, `dropped-oldest`; `scheduled` if delayed).
   * @throws PartitionFullError (rejectStrategy Exception), InvalidSubmitOptionsError, UnknownTaskTypeError, InvalidPayloadError
   */
  async submitOrdered<P>(type: string, key: string, payload: P, options: OrderedSubmitOptions = {}): Promise<OrderedSubmitResult> {
    const [result] = await this.submitOrderedMany(type, [{ ...options, key, payload }]);
    if (result.outcome === 'rejected') throw new PartitionFullError(result.partition, this.routeStore!.options.maxPartitionSize);
    return result;
  }

  /**
   * Submits many ordered tasks of one type with one script call per partition; tasks of one key keep the
   * order of `items`. Every item is validated before anything is written.
   */
  async submitOrderedMany<P>(type: string, items: OrderedSubmitItem<P>[]): Promise<OrderedSubmitResult[]> {
    const producer = this.orderedProducer(type);
    const at = Date.now();
    const entries = items.map((item, index) => {
      for (const name of Object.keys(item)) {
        if (!['key', 'payload', 'id', 'delay', 'runAt'].includes(name)) {
          throw new InvalidSubmitOptionsError(name, 'unknown option (known: key, payload, id, delay, runAt)');
        }
      }
      const { key } = item;
      if (typeof key !== 'string' || key.length === 0 || key.length > 1024) {
        throw new InvalidSubmitOptionsError('key', `items[${index}]: must be a non-empty string of at most 1024 characters, got ${JSON.stringify(key)}`);
      }
      const id = item.id === undefined ? newId() : this.checkId(item.id);
      const due = this.toDue(item);
      const entry = { key, id, item: encodeRouteItem(id, type, key, encodePayload(item.payload, this.options.maxPayloadBytes), at) };
      return { index, entry, due, delayed: 'at' in due || due.delay > 0 };
    });
    const results: OrderedSubmitResult[] = new Array(entries.length);
    const now = entries.filter((e) => !e.delayed);
    const pushed = await producer.pushMany(now.map((e) => e.entry));
    now.forEach((e, i) => (results[e.index] = pushed[i]));
    const later = entries.filter((e) => e.delayed);
    if (later.length > 0) {
      const delayType = routeDelayType(this.routeStore!.options.qId);
      await this.store.submit(delayType, later.map((e) => ({ id: e.entry.id, due: e.due, payload: JSON.stringify({ key: e.entry.key, item: e.entry.item }) })));
      later.forEach((e) => (results[e.index] = { id: e.entry.id, partition: -1, outcome: 'scheduled' }));
    }
    return results;
  }

  /** @internal Moves a due delayed ordered task into its partition. */
  async enqueueDueOrdered(id: string, { key, item }: { key: string; item: string }): Promise<void> {
    if (!this.producer) throw new InvalidSubmitOptionsError('key', 'the route queue is not configured (module option "route")');
    const result = await this.producer.push(key, id, item);
    if (result.outcome === 'discarded') throw new Error(`partition ${result.partition} is full: delayed ordered task ${id} discarded`);
  }

  /** The route queue's partitions (owner, epoch, waiting, in flight, dead) and live machines. */
  getRouteStatus(): Promise<RouteStatus> {
    if (!this.routeStore) throw new InvalidSubmitOptionsError('route', 'the route queue is not configured (module option "route")');
    return readRouteStatus(this.routeStore);
  }

  /** Dead letters of the route queue (at most `limit` per partition, oldest first). @default limit 100 */
  listOrderedDead(limit = 100): Promise<OrderedDeadTask[]> {
    if (!this.routeStore) throw new InvalidSubmitOptionsError('route', 'the route queue is not configured (module option "route")');
    return readOrderedDead(this.routeStore, limit);
  }

  /**
   * Re-drives the route queue's dead letters (the oldest `limit` per partition): each goes back to the tail
   * of its key's partition, behind what is queued now. Unreadable ones are dropped. Returns how many.
   * @default limit 100
   */
  redriveOrderedDead(limit = 100): Promise<number> {
    if (!this.routeStore || !this.producer) throw new InvalidSubmitOptionsError('route', 'the route queue is not configured (module option "route")');
    return redriveOrderedDead(this.routeStore, this.producer, limit);
  }

  private orderedProducer(type: string): RouteProducer {
    assertTaskType(type);
    if (!this.producer) throw new InvalidSubmitOptionsError('key', 'ordered tasks need the route queue (module option "route")');
    const known = this.explorer.hasWorker(type) || type in this.options.types;
    if (known && !this.explorer.isOrdered(type)) {
      throw new InvalidSubmitOptionsError('key', `type "${type}" is not ordered: use submit(), or mark it { ordered: true }`);
    }
    if (!known && this.options.strictTypes) throw new UnknownTaskTypeError(type);
    return this.producer;
  }

  /**
   * Submits one task and returns its id. When a task with the given id exists (delayed, ready, running or
   * dead), nothing is created or changed and the same id is returned; use `submitMany` to learn which.
   * @throws InvalidTaskTypeError, UnknownTaskTypeError, InvalidSubmitOptionsError, InvalidPayloadError
   */
  async submit<P>(type: string, payload: P, options: SubmitOptions = {}): Promise<string> {
    const [result] = await this.submitMany(type, [{ ...options, payload }]);
    return result.id;
  }

  /**
   * Submits many tasks of one type in few round trips. Every item is validated before anything is
   * written, so a bad item rejects the whole call and writes nothing.
   */
  async submitMany<P>(type: string, items: SubmitItem<P>[]): Promise<SubmitResult[]> {
    this.assertKnownType(type);
    if (!Array.isArray(items)) throw new InvalidSubmitOptionsError('items', 'must be an array');
    const tasks = items.map((item, index) => this.toNewTask(item, index));
    const results: SubmitResult[] = [];
    for (let i = 0; i < tasks.length; i += SUBMIT_CHUNK) {
      results.push(...(await this.store.submit(type, tasks.slice(i, i + SUBMIT_CHUNK))));
    }
    return results;
  }

  /** Cancels a waiting task, or asks a running one to stop (it is not retried). */
  cancel(type: string, id: string): Promise<CancelResult> {
    assertTaskType(type);
    return this.store.cancel(type, this.checkId(id));
  }

  /**
   * Moves a waiting task to a new due time (`delay` or `runAt`). Returns false when the task is not
   * waiting (running, finished, dead or unknown).
   */
  async reschedule(type: string, id: string, when: Pick<SubmitOptions, 'delay' | 'runAt'>): Promise<boolean> {
    assertTaskType(type);
    return (await this.store.reschedule(type, this.checkId(id), this.toDue(when))) !== null;
  }

  /** The task's state: delayed, ready, running, done (among the last `keepDone`), dead or unknown. */
  async getState(type: string, id: string): Promise<TaskState> {
    return (await this.getTask(type, id)).state;
  }

  /** The task's state with its record (attempts, due time, payload, last error). */
  async getTask<P = unknown>(type: string, id: string): Promise<TaskInfo<P>> {
    assertTaskType(type);
    const { state, record, error, due, attempt } = await this.store.get(type, this.checkId(id));
    const info: TaskInfo<P> = { id, type, state };
    const decoded = record ? decodeRecord(record, due ?? 0) : null;
    if (decoded) {
      info.attempts = attempt ?? decoded.attempts;
      info.dueAt = decoded.dueAt;
      info.payload = parseJson(decoded.payload) as P;
    }
    info.lastError = decodeError(error);
    return info;
  }

  /** Dead letters of a type, oldest first. @default offset 0, limit 100 */
  async listDead<P = unknown>(type: string, offset = 0, limit = 100): Promise<{ total: number; tasks: DeadTask<P>[] }> {
    assertTaskType(type);
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
   * oldest `limit`. Corrupt records stay dead. Returns how many were re-driven.
   */
  redriveDead(type: string, ids: string[] = [], limit = 100): Promise<number> {
    assertTaskType(type);
    return this.store.redrive(type, ids.map((id) => this.checkId(id)), limit);
  }

  /** Deletes dead tasks for good. Returns how many were deleted. */
  deleteDead(type: string, ids: string[]): Promise<number> {
    assertTaskType(type);
    if (ids.length === 0) return Promise.resolve(0);
    return this.store.deleteDead(type, ids.map((id) => this.checkId(id)));
  }

  private assertKnownType(type: string): void {
    assertTaskType(type);
    if (this.options.strictTypes && !this.explorer.hasWorker(type) && !(type in this.options.types)) {
      throw new UnknownTaskTypeError(type);
    }
    if (this.explorer.isOrdered(type)) {
      throw new InvalidSubmitOptionsError('key', `type "${type}" is ordered: use submitOrdered(type, key, payload)`);
    }
  }

  private toNewTask(item: SubmitItem, index: number): NewTask {
    if (item === null || typeof item !== 'object') {
      throw new InvalidSubmitOptionsError(`items[${index}]`, 'must be an object with a payload');
    }
    for (const key of Object.keys(item)) {
      if (!SUBMIT_KEYS.includes(key)) throw new InvalidSubmitOptionsError(key, `unknown option (known: ${SUBMIT_KEYS.join(', ')})`);
    }
    return {
      id: item.id === undefined ? generateTaskId() : this.checkId(item.id, true),
      due: this.toDue(item),
      payload: encodePayload(item.payload, this.options.maxPayloadBytes),
    };
  }

  private toDue({ delay, runAt }: Pick<SubmitOptions, 'delay' | 'runAt'>): Due {
    if (delay !== undefined && runAt !== undefined) {
      throw new InvalidSubmitOptionsError('delay', 'give either delay or runAt, not both');
    }
    if (runAt !== undefined) {
      const at = runAt instanceof Date ? runAt.getTime() : runAt;
      if (typeof at !== 'number' || !Number.isFinite(at) || at < 0) {
        throw new InvalidSubmitOptionsError('runAt', `must be a Date or epoch milliseconds, got ${String(runAt)}`);
      }
      return { at };
    }
    const ms = delay ?? 0;
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
      throw new InvalidSubmitOptionsError('delay', `must be a non-negative number of milliseconds, got ${String(delay)}`);
    }
    return { delay: ms };
  }

  /** `fresh`: an id for a new delayed task, where `#...` is reserved for generated ids. */
  private checkId(id: unknown, fresh = false): string {
    if (typeof id !== 'string' || id.length === 0 || id.length > 256) {
      throw new InvalidSubmitOptionsError('id', `must be a non-empty string of at most 256 characters, got ${JSON.stringify(id)}`);
    }
    if (fresh && id.startsWith('#')) throw new InvalidSubmitOptionsError('id', `ids starting with "#" are generated ones, got ${JSON.stringify(id)}`);
    return id;
  }
}
