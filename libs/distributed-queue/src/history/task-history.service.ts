import { Inject, Injectable } from '@nestjs/common';
import { checkedTypeOf, type TaskContract } from '../contracts/task-contract';
import { HistoryNotConfiguredError, InvalidArgumentError } from '../errors';
import { checkId } from '../services/task-input';
import type { TaskHistoryRecord } from './history-event';
import type { HistoryPage, HistorySearch } from './history-search';
import { HISTORY_STORE, type HistoryStore } from './history-store';
import { FLUSH_TIMEOUT_MS, HistoryWriter } from './history-writer';

/**
 * The task history in PostgreSQL (module option `history`): a task's row by id, and searches by type,
 * status and submit time with keyset paging. Rows lag the queue by the writer's flush interval.
 */
@Injectable()
export class TaskHistoryService {
  /** @internal Nest creates it (dependency injection): inject the class, do not construct it. */
  constructor(
    @Inject(HISTORY_STORE) private readonly store: HistoryStore | null,
    private readonly writer: HistoryWriter,
  ) {}

  /** Whether the history is configured. */
  get enabled(): boolean {
    return this.store !== null;
  }

  /**
   * The history row of a task (null when there is none): with a done task's `result`, and a delay-queue task's
   * `logs` (and `logsDropped`) as Redis held them when its last attempt's end was copied.
   * @throws HistoryNotConfiguredError without the `history` option
   */
  async getHistory(type: string | TaskContract<unknown, boolean>, id: string): Promise<TaskHistoryRecord | null> {
    return this.required().getHistory(checkedTypeOf(type), checkId(id));
  }

  /**
   * Rows by type, status, flow (`flowId`: the rows of its nodes) and submit time, newest first, a page at a
   * time (`nextCursor`).
   * @throws InvalidArgumentError for a bad limit, cursor, status, flow id or time range
   */
  async searchHistory(query: HistorySearch = {}): Promise<HistoryPage> {
    if (query === null || typeof query !== 'object') throw new InvalidArgumentError('query', `must be a search object, got ${String(query)}`);
    const type = query.type === undefined ? undefined : checkedTypeOf(query.type);
    return this.required().search({ ...query, type });
  }

  /**
   * Copies the events waiting in Redis now into PostgreSQL (e.g. before reading what just happened), tasks
   * held back for `coalesceMs` included, from any instance: the streams another instance's writer holds, that
   * writer copies at its next pass. Resolves once all of it is in PostgreSQL.
   * @param options.timeoutMs the time limit, 1 ms to 1 hour (default 30000)
   * @throws HistoryFlushTimeoutError when it is not all in PostgreSQL in time (PostgreSQL or the writer
   *   holding a stream does not answer); InvalidArgumentError naming `timeoutMs`
   */
  async flush(options: { timeoutMs?: number } = {}): Promise<void> {
    this.required();
    const timeoutMs = options?.timeoutMs ?? FLUSH_TIMEOUT_MS;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 3_600_000) {
      throw new InvalidArgumentError('timeoutMs', `${String(timeoutMs)} is not an integer from 1 to 3600000 (ms)`);
    }
    await this.writer.flush(timeoutMs);
  }

  private required(): HistoryStore {
    if (!this.store) throw new HistoryNotConfiguredError();
    return this.store;
  }
}
