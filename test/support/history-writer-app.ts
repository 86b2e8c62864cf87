/**
 * A child application that only writes the task history (no workers): for crash tests of the history writer.
 * env: DQ_CONNECTION (JSON), DQ_PREFIX, DQ_TYPE (the type whose stream it copies), DQ_HISTORY (JSON: the
 * `history` option), DQ_DIE_AFTER_COMMIT=n (crash hook: SIGKILL this process right after the PostgreSQL
 * commit (W3) that brings the tasks it wrote as done to n or more, before the writer trims the stream (W4);
 * a 'committed' message first, with the stream, the recorded position and the batch's rows),
 * DQ_DIE_BETWEEN_CHUNKS=1 (crash hook: SIGKILL this process when a batch's transaction is about to send its
 * second fold statement (a batch of more than FOLD_CHUNK_CHARS of entry text), after the first one ran; a
 * 'between' message first, with the first statement's entry count), DQ_DIE_AT_SAVEPOINT=n (crash hook: SIGKILL
 * this process when a batch written a row at a time (PgHistoryStore.applyEach) is about to send its n-th
 * `SAVEPOINT`, the rows before it upserted in the open transaction; a 'savepoint' message first, with n).
 * Messages: { type: 'ready' } once started.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedQueueModule } from 'nestjs-distributed-queue';
import { PgHistoryStore } from 'nestjs-distributed-queue/history/pg-history.store';
import { decodeEntries } from 'nestjs-distributed-queue/history/history-decode';
import { foldValidEvents } from 'nestjs-distributed-queue/history/history-fold';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};
const send = (message: object) => process.send?.(message);

// Crash hook: the same module instance as the library's (tsconfig paths), so the writer's own commit is cut.
if (process.env.DQ_DIE_AFTER_COMMIT) {
  const applyEntries = PgHistoryStore.prototype.applyEntries;
  const doneIds = new Set<string>();
  PgHistoryStore.prototype.applyEntries = async function (this: PgHistoryStore, ...args: Parameters<PgHistoryStore['applyEntries']>) {
    const skipped = await applyEntries.apply(this, args);
    const [{ stream, entries, position, from }] = args;
    const patches = foldValidEvents(decodeEntries(entries.map((e) => e.entry), from).flatMap((e) => e.events)).patches;
    for (const p of patches) if (p.status === 'done') doneIds.add(p.id);
    if (doneIds.size >= Number(process.env.DQ_DIE_AFTER_COMMIT)) {
      const rows = patches.map((p) => ({ id: p.id, status: p.status }));
      // The commit is done; the trim that follows it in the writer never runs.
      await new Promise<never>(() => process.send!({ type: 'committed', stream, position, rows }, () => process.kill(process.pid, 'SIGKILL')));
    }
    return skipped;
  };
}

/**
 * Crash hook: pg's own Client (the module the store loads), so the writer's statements are the ones cut. The
 * `nth` statement of a transaction that `matches` is never sent: the process sends `message(params)` and dies
 * (SIGKILL), the statements before it run in the open transaction.
 */
function dieAtStatement(matches: (text: string) => boolean, nth: number, message: (params: unknown[]) => object): void {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { Client } = require('pg') as typeof import('pg');
  const query = Client.prototype.query as (...args: unknown[]) => unknown;
  let seen = 0;
  Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : '';
    if (text === 'BEGIN') seen = 0;
    if (matches(text) && ++seen === nth) {
      return new Promise<never>(() => process.send!(message((args[1] as unknown[]) ?? []), () => process.kill(process.pid, 'SIGKILL')));
    }
    return query.apply(this, args);
  } as typeof Client.prototype.query;
}

// The second fold statement of a batch (the first one's entry count in the message).
if (process.env.DQ_DIE_BETWEEN_CHUNKS) {
  dieAtStatement((text) => text.includes('json_array_elements_text($1::json)'), 2, (params) => ({ type: 'between', entries: (JSON.parse(params[0] as string) as unknown[]).length }));
}

// The n-th savepoint of a row-at-a-time batch.
if (process.env.DQ_DIE_AT_SAVEPOINT) {
  const n = Number(process.env.DQ_DIE_AT_SAVEPOINT);
  dieAtStatement((text) => text === 'SAVEPOINT dq_row', n, () => ({ type: 'savepoint', n }));
}

@Module({
  imports: [
    DistributedQueueModule.forRoot({
      connection: JSON.parse(env('DQ_CONNECTION')),
      keyPrefix: env('DQ_PREFIX'),
      workers: false,
      types: { [env('DQ_TYPE')]: {} },
      history: JSON.parse(env('DQ_HISTORY')),
    }),
  ],
})
class HistoryWriterAppModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(HistoryWriterAppModule, { logger: ['error', 'warn'] });
  await app.init();
  send({ type: 'ready', pid: process.pid });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
