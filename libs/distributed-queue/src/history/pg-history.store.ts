import type { Pool, PoolClient } from 'pg';
import { InvalidArgumentError, InvalidOptionsError } from '../errors';
import type { HistoryEvent, TaskHistoryRecord } from './history-event';
import { encodeHistoryCursor } from './history-cursor';
import { foldHistoryEvents, foldValidEvents, isEntryId, patchKey, type SkippedEvent, type TaskPatch } from './history-fold';
import type { BatchEntry, EntryBatch } from './history-store';
import { decodeEntries, isOrderedDelayStream } from './history-decode';
import { attachTaskLogs } from './history-logs';
import { historyColumns } from './history-columns';
import { foldUpsertSql } from './pg-history.fold-sql';
import { checkHistorySearch, HistoryPage, HistorySearch, searchWhere } from './history-search';
import { checkOut } from './pg-client';
import { loadPg } from './pg.loader';
import { HistoryTableNames, historyPoolConfig, historyTableNames, PgHistoryOptions } from './pg-history.options';
import { migrateHistorySchema } from './pg-history.schema';
import { HistoryRow, ROW_COLUMNS, savePositionSql, toRecord, upsertParams, upsertSql } from './pg-history.sql';

/** Why a connection failed, from pg's error (Node's AggregateError of a multi-address connect has no message). */
function connectReason(error: unknown): string {
  const e = error as Error & { code?: string; errors?: Error[] };
  return e?.message || e?.errors?.map((inner) => inner.message).join('; ') || e?.code || String(error);
}

function requireText(name: string, value: unknown): string {
  if (typeof value !== 'string' || !value) throw new InvalidArgumentError(name, 'expected a non-empty string');
  return value;
}

/** Entry text (its fields' characters) per fold statement at most: a batch past it is written in several. */
const FOLD_CHUNK_CHARS = 8 << 20;

/** `entries` in runs of at most `max` characters of field text (an entry longer than that is a run alone). */
function textChunks(entries: readonly BatchEntry[], max: number): BatchEntry[][] {
  const chunks: BatchEntry[][] = [];
  let chunk: BatchEntry[] = [];
  let size = 0;
  for (const entry of entries) {
    let chars = 0;
    for (const field of entry.entry[1]) chars += field.length;
    if (chunk.length > 0 && size + chars > max) {
      chunks.push(chunk);
      chunk = [];
      size = 0;
    }
    chunk.push(entry);
    size += chars;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/** True for PostgreSQL's data exceptions (SQLSTATE class 22: a malformed value, as opposed to a failure). */
const isDataException = (error: unknown): boolean => String((error as { code?: unknown })?.code ?? '').startsWith('22');

/**
 * The task history in PostgreSQL: one row per task (primary key type + id) kept current from the tasks'
 * lifecycle events, plus the position of every stream the events came from. No Redis, no Nest: the history
 * writer feeds it with `apply`, inspection reads it with `getHistory` and `search`.
 *
 * A reused id (a `submitted` for a type and id whose row exists) restarts that row: the earlier task's
 * life is replaced, not kept beside it.
 */
export class PgHistoryStore {
  private readonly upsert: string;
  private readonly foldUpsert: string;
  private readonly savePosition: string;
  private closed?: Promise<void>;

  private constructor(
    private readonly pool: Pool,
    readonly names: HistoryTableNames,
  ) {
    this.upsert = upsertSql(names);
    this.foldUpsert = foldUpsertSql(names);
    this.savePosition = savePositionSql(names);
  }

  /**
   * Connects (failing within the connect timeout when the server cannot be reached), then creates or
   * migrates the tables.
   * @throws InvalidOptionsError naming `history.connection` when the connection fails, `history.table` or
   *   `history.schema` for a name that is not a plain identifier, `history` when pg is not installed
   * @throws HistorySchemaError when the tables were migrated by a newer version of the library
   */
  static async open(options: PgHistoryOptions): Promise<PgHistoryStore> {
    const names = historyTableNames(options?.table, options?.schema);
    const config = historyPoolConfig(options ?? ({} as PgHistoryOptions));
    const pool = new (loadPg().Pool)(config);
    // NOTE: an idle connection that breaks (server restart, network) is reported here; without a listener
    // it would crash the process. The pool drops it and the next query connects anew.
    pool.on('error', () => undefined);
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw new InvalidOptionsError('history.connection', connectReason(error));
    }
    const giveBack = checkOut(client);
    try {
      await migrateHistorySchema(client, names);
      giveBack();
    } catch (error) {
      giveBack(error);
      await pool.end().catch(() => undefined);
      throw error;
    }
    return new PgHistoryStore(pool, names);
  }

  /**
   * Writes a batch of one stream, in one transaction: every task's row is brought to the state of its last
   * event in the batch (one upsert statement for the whole batch), and `position` (the stream entry id of
   * the batch's last event) is recorded for `stream`. Idempotent: re-applying a batch, or an older one,
   * changes nothing, so a caller that did not see the commit retries the same batch.
   * @throws InvalidArgumentError naming `stream`, `position` or `events` for malformed input
   */
  async apply(stream: string, events: readonly HistoryEvent[], position: string): Promise<void> {
    if (!Array.isArray(events)) throw new InvalidArgumentError('events', 'expected an array');
    await this.applyPatches(stream, foldHistoryEvents(events), position);
  }

  /**
   * Writes already folded patches (see foldHistoryEvents) and the stream's position, in one transaction:
   * what `apply` does after folding. The history writer folds across its passes and calls this.
   * @throws InvalidArgumentError naming `stream` or `position`
   */
  async applyPatches(stream: string, patches: readonly TaskPatch[], position: string): Promise<void> {
    requireText('stream', stream);
    if (!isEntryId(position)) throw new InvalidArgumentError('position', `${String(position)} is not a stream entry id`);
    await this.transaction(async (client) => {
      if (patches.length) await client.query(this.upsert, upsertParams(patches));
      await client.query(this.savePosition, [stream, position]);
    });
  }

  /**
   * Writes a batch of raw stream entries and records `position` for its stream, in one transaction:
   * PostgreSQL decodes and folds the entries (see foldUpsertSql: the rows `apply` writes for the decoded
   * events), a statement per FOLD_CHUNK_CHARS of entry text. When the batch holds a malformed entry (the
   * statement fails with a data exception), the batch is decoded here instead and its malformed events are
   * left out and returned; so are a route queue's delay-queue streams (whose submits are rewritten as the
   * ordered tasks' own, see history-decode.ts). Idempotent, as `apply`.
   * @throws InvalidArgumentError naming `stream` or `position`
   */
  async applyEntries(batch: EntryBatch): Promise<SkippedEvent[]> {
    requireText('stream', batch.stream);
    if (!isEntryId(batch.position)) throw new InvalidArgumentError('position', `${String(batch.position)} is not a stream entry id`);
    if (!isOrderedDelayStream(batch.from)) {
      try {
        await this.transaction(async (client) => {
          const logs = JSON.stringify(Object.fromEntries(batch.logs));
          const timeouts = JSON.stringify(Object.fromEntries(batch.types.map((type) => [type, batch.timeoutOf(type)])));
          for (const chunk of textChunks(batch.entries, FOLD_CHUNK_CHARS)) {
            await client.query(this.foldUpsert, [...historyColumns(chunk), batch.from.type ?? '', batch.from.partition ?? null, logs, timeouts]);
          }
          await client.query(this.savePosition, [batch.stream, batch.position]);
        });
        return [];
      } catch (error) {
        if (!isDataException(error)) throw error;
      }
    }
    return this.applyDecoded(batch);
  }

  /**
   * Writes a batch as `applyEntries` does, decoded and folded in this process instead (history-decode.ts,
   * history-fold.ts): the way of a batch with a malformed entry, whose malformed events are left out and
   * returned. The rows are those PostgreSQL's fold writes (test/history-fold-sql holds the two to it).
   * @throws InvalidArgumentError naming `stream` or `position`
   */
  async applyDecoded(batch: EntryBatch): Promise<SkippedEvent[]> {
    // NOTE: a delay type's or a partition's entry decodes into one event per task, in `ids` order.
    const events = batch.entries.flatMap(({ entry, only }) => decodeEntries([entry], batch.from)[0].events.filter((_, i) => only === '' || only[i] === '1'));
    attachTaskLogs(events, batch.logs);
    const { patches, skipped } = foldValidEvents(events);
    for (const p of patches) if (p.ttrMs === null) p.ttrMs = batch.timeoutOf(p.topic);
    try {
      await this.applyPatches(batch.stream, patches, batch.position);
      return skipped;
    } catch (error) {
      if (!isDataException(error)) throw error;
    }
    return [...skipped, ...(await this.applyEach(batch.stream, patches, batch.position, events))];
  }

  /**
   * The last way of writing a batch, when PostgreSQL refuses a value of it even decoded: one row at a time in
   * one transaction (a savepoint each), the rows it refuses left out, then the position. Returns the tasks
   * left out, each as its last event of the batch, so that the copy goes on past them.
   */
  private async applyEach(stream: string, patches: readonly TaskPatch[], position: string, events: readonly HistoryEvent[]): Promise<SkippedEvent[]> {
    const refused: SkippedEvent[] = [];
    const lastEvent = new Map(events.map((e) => [patchKey(e), e]));
    await this.transaction(async (client) => {
      for (const patch of patches) {
        await client.query('SAVEPOINT dq_row');
        try {
          await client.query(this.upsert, upsertParams([patch]));
          await client.query('RELEASE SAVEPOINT dq_row');
        } catch (error) {
          if (!isDataException(error)) throw error;
          await client.query('ROLLBACK TO SAVEPOINT dq_row');
          refused.push({ event: lastEvent.get(patchKey({ type: patch.topic, id: patch.id }))!, problem: `was refused by PostgreSQL (${(error as Error).message}): its task's row is left out of this batch` });
        }
      }
      await client.query(this.savePosition, [stream, position]);
    });
    return refused;
  }

  /** The last entry id applied from `stream`, or null when none was. */
  async position(stream: string): Promise<string | null> {
    requireText('stream', stream);
    const { rows } = await this.pool.query<{ last_id: string }>(
      `SELECT last_id FROM ${this.names.positions} WHERE stream = $1`,
      [stream],
    );
    return rows[0]?.last_id ?? null;
  }

  /** The row of a task, or null when the history has none. */
  async getHistory(type: string, id: string): Promise<TaskHistoryRecord | null> {
    requireText('type', type);
    requireText('id', id);
    const { rows } = await this.pool.query<HistoryRow>(
      `SELECT ${ROW_COLUMNS} FROM ${this.names.history} WHERE topic = $1 AND id = $2`,
      [type, id],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /**
   * Rows by type, status and submit time, newest first (then by type and id, descending). Pages are
   * keyset-paginated: pass `nextCursor` back as `cursor`; rows inserted meanwhile do not shift pages.
   * @throws InvalidArgumentError naming the bad argument
   */
  async search(query: HistorySearch = {}): Promise<HistoryPage> {
    const q = checkHistorySearch(query);
    const { where, params } = searchWhere(q);
    const { rows } = await this.pool.query<HistoryRow>(
      `SELECT ${ROW_COLUMNS} FROM ${this.names.history} ${where}
       ORDER BY create_time DESC, topic DESC, id DESC LIMIT ${q.limit + 1}`,
      params,
    );
    const page = rows.slice(0, q.limit).map(toRecord);
    if (rows.length <= q.limit) return { rows: page };
    const last = page[page.length - 1];
    return { rows: page, nextCursor: encodeHistoryCursor({ createdAt: last.createdAt!, type: last.type, id: last.id }) };
  }

  /**
   * Deletes the rows of tasks finished (done, dead or cancelled) before `cutoffMs`, `batch` rows per
   * statement (short locks, bounded WAL per statement), until none is left. Returns how many it deleted.
   * @param batch rows per DELETE, 1 to 100000 (default 1000)
   * @throws InvalidArgumentError naming `cutoffMs` or `batch`
   */
  async purgeFinishedBefore(cutoffMs: number, batch = 1000): Promise<number> {
    if (!Number.isSafeInteger(cutoffMs)) throw new InvalidArgumentError('cutoffMs', `${String(cutoffMs)} is not epoch ms`);
    if (!Number.isInteger(batch) || batch < 1 || batch > 100_000) {
      throw new InvalidArgumentError('batch', `${String(batch)} is not an integer from 1 to 100000`);
    }
    const table = this.names.history;
    const sql = `DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table}
      WHERE finished_time < timestamptz 'epoch' + $1::bigint * interval '1 millisecond' LIMIT $2)`;
    let total = 0;
    for (;;) {
      const { rowCount } = await this.pool.query(sql, [cutoffMs, batch]);
      if (!rowCount) return total;
      total += rowCount;
    }
  }

  /** Closes the pool (waits for queries under way). Idempotent. */
  async close(): Promise<void> {
    this.closed ??= this.pool.end();
    await this.closed;
  }

  /** Runs `work` in a transaction on one connection; after a failure the connection is discarded. */
  private async transaction(work: (client: PoolClient) => Promise<void>): Promise<void> {
    const client = await this.pool.connect();
    const giveBack = checkOut(client);
    try {
      await client.query('BEGIN');
      await work(client);
      await client.query('COMMIT');
      giveBack();
    } catch (error) {
      giveBack(error);
      throw error;
    }
  }
}
