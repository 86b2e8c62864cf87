import { Inject, Injectable } from '@nestjs/common';
import { checkedTypeOf, type TaskContract } from '../contracts/task-contract';
import { HistoryNotConfiguredError } from '../errors';
import { checkId } from '../services/task-input';
import type { TaskHistoryRecord } from './history-event';
import type { HistoryPage, HistorySearch } from './history-search';
import { HISTORY_STORE, type HistoryStore } from './history-store';
import { HistoryWriter } from './history-writer';

/**
 * The task history in PostgreSQL (module option `history`): a task's row by id, and searches by type,
 * status and submit time with keyset paging. Rows lag the queue by the writer's flush interval.
 */
@Injectable()
export class TaskHistoryService {
  constructor(
    @Inject(HISTORY_STORE) private readonly store: HistoryStore | null,
    private readonly writer: HistoryWriter,
  ) {}

  /** Whether the history is configured. */
  get enabled(): boolean {
    return this.store !== null;
  }

  /**
   * The history row of a task (null when there is none).
   * @throws HistoryNotConfiguredError without the `history` option
   */
  async getHistory(type: string | TaskContract<unknown, boolean>, id: string): Promise<TaskHistoryRecord | null> {
    return this.required().getHistory(checkedTypeOf(type), checkId(id));
  }

  /**
   * Rows by type, status and submit time, newest first, a page at a time (`nextCursor`).
   * @throws InvalidArgumentError for a bad limit, cursor, status or time range
   */
  async searchHistory(query: HistorySearch = {}): Promise<HistoryPage> {
    const type = query.type === undefined ? undefined : checkedTypeOf(query.type);
    return this.required().search({ ...query, type });
  }

  /** Copies the events waiting in Redis now (e.g. before reading what just happened). */
  async flush(): Promise<void> {
    this.required();
    await this.writer.flush();
  }

  private required(): HistoryStore {
    if (!this.store) throw new HistoryNotConfiguredError();
    return this.store;
  }
}
