import { Redis } from 'ioredis';
import { InvalidOptionsError } from '../errors';
import type { RedisConnection } from '../interfaces';
import type { RedisClient } from './script-loader';

/** Emitted on a client (with the server's error) when the SELECT of a new connection was refused. */
const SELECT_REFUSED = Symbol('selectRefused');

function isSelectReply(error: unknown): error is Error {
  const command = (error as { command?: { name?: unknown } } | null)?.command;
  return error instanceof Error && typeof command?.name === 'string' && command.name.toLowerCase() === 'select';
}

/**
 * Makes a connection whose SELECT the server refuses (a database index out of range) never read as
 * connected: ioredis only reports it as an 'error' and goes on, in DB 0. The connection is dropped
 * instead (ioredis reconnects by its retryStrategy, and SELECTs again), so commands wait or fail, never
 * running in DB 0. Cluster clients have database 0 only (checked with the options).
 */
export function refuseFailedSelect(client: RedisClient): void {
  if (!(client instanceof Redis)) return;
  client.on('error', (error: unknown) => {
    if (!isSelectReply(error)) return;
    // NOTE: ioredis sends SELECT first on a new connection and flushes queued commands only at 'ready',
    // after the replies to SELECT and CLIENT SETNAME (connectionName is always set here): this listener runs
    // (in the SELECT's rejection) before that. destroy(), not end(): no later reply may make it ready.
    client.stream?.destroy();
    client.emit(SELECT_REFUSED, error);
  });
}

/** The database a connection selects: its option name and index; undefined for 0 or a cluster. */
export function databaseOf(connection: RedisConnection): { option: string; db: number } | undefined {
  if (typeof connection === 'string') {
    let url: URL;
    try {
      url = new URL(connection);
    } catch {
      return undefined;
    }
    const db = Number(url.pathname.length > 1 ? url.pathname.slice(1) : url.searchParams.get('db') ?? 0);
    return db > 0 ? { option: 'connection', db } : undefined;
  }
  if ('cluster' in connection) return undefined;
  const db = Number(connection.db ?? 0);
  return db > 0 ? { option: 'connection.db', db } : undefined;
}

/**
 * Fails start-up when the server refuses the connection's database: connects `client` (when it has not)
 * and waits for its first outcome. A refused SELECT throws `InvalidOptionsError` naming the option (the
 * client is disconnected); ready, any other failure (Redis unreachable: reported elsewhere) or the end of
 * the client return.
 */
export async function checkDatabase(client: RedisClient, connection: RedisConnection): Promise<void> {
  const database = databaseOf(connection);
  if (!database || !(client instanceof Redis) || client.status === 'ready') return;
  const refused = await new Promise<Error | undefined>((resolve) => {
    const settle = (error?: Error): void => {
      client.off(SELECT_REFUSED, onRefused).off('ready', onOther).off('error', onError).off('end', onOther);
      resolve(error);
    };
    const onRefused = (error: Error): void => settle(error);
    const onOther = (): void => settle();
    const onError = (error: unknown): void => {
      if (!isSelectReply(error)) settle();
    };
    client.on(SELECT_REFUSED, onRefused).on('ready', onOther).on('error', onError).on('end', onOther);
    if (client.status === 'wait') client.connect().catch(() => undefined);
  });
  if (!refused) return;
  client.disconnect();
  const where = database.option === 'connection' ? " (the URL's database)" : '';
  throw new InvalidOptionsError(database.option, `the server refused SELECT ${database.db}${where}: ${refused.message}`);
}
