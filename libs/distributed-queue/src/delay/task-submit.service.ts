import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'crypto';
import { DISTRIBUTED_QUEUE_RESOLVED_OPTIONS } from '../distributed-queue.constants';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { InvalidSubmitOptionsError, UnknownTaskTypeError } from '../errors';
import type {
  CancelResult, DeadTask, SubmitItem, SubmitOptions, SubmitResult, TaskInfo, TaskState,
} from '../interfaces';
import { assertTaskType, type ResolvedModuleOptions } from '../options/resolve-options';
import { DelayQueueStore, type Due, type NewTask } from './delay-queue.store';
import { decodeError, decodeRecord, encodePayload } from './task-codec';

/** Tasks per submit script call: bounds the time one call holds Redis. */
const SUBMIT_CHUNK = 500;
const SUBMIT_KEYS = ['id', 'delay', 'runAt', 'payload'];

function newId(): string {
  return randomBytes(12).toString('base64url');
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
  constructor(
    private readonly store: DelayQueueStore,
    private readonly explorer: DistributedQueueExplorer,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
  ) {}

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
      const chunk = tasks.slice(i, i + SUBMIT_CHUNK);
      const created = await this.store.submit(type, chunk);
      chunk.forEach((task, j) => results.push({ id: task.id, created: created[j] }));
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
    const { state, record, error } = await this.store.get(type, this.checkId(id));
    const info: TaskInfo<P> = { id, type, state };
    const decoded = record ? decodeRecord(record) : null;
    if (decoded) {
      info.attempts = decoded.attempts;
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
  }

  private toNewTask(item: SubmitItem, index: number): NewTask {
    if (item === null || typeof item !== 'object') {
      throw new InvalidSubmitOptionsError(`items[${index}]`, 'must be an object with a payload');
    }
    for (const key of Object.keys(item)) {
      if (!SUBMIT_KEYS.includes(key)) throw new InvalidSubmitOptionsError(key, `unknown option (known: ${SUBMIT_KEYS.join(', ')})`);
    }
    return {
      id: item.id === undefined ? newId() : this.checkId(item.id),
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

  private checkId(id: unknown): string {
    if (typeof id !== 'string' || id.length === 0 || id.length > 256) {
      throw new InvalidSubmitOptionsError('id', `must be a non-empty string of at most 256 characters, got ${JSON.stringify(id)}`);
    }
    return id;
  }
}
