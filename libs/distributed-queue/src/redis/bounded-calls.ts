import type { Redis } from 'ioredis';
import { Cluster } from 'ioredis';
import { RedisOutOfMemoryError, RedisUnavailableError } from '../errors';
import type { MemoryLog } from './memory-log';
import { tagOutage, type OutageLog } from './outage-log';
import type { RedisClient } from './script-loader';
import { corkForTick } from './write-batching';

/** How long the library waits for one Redis call by default: queued while reconnecting, or for its reply. */
export const DEFAULT_REDIS_TIMEOUT_MS = 5000;
/** How long a cluster call waits by default for its slot's migration to end (see `slotMigrationTimeoutMs`). */
export const DEFAULT_SLOT_MIGRATION_TIMEOUT_MS = 60_000;

/** The parts of an ioredis `Command` this file uses (ioredis does not export the type's internals). */
interface Command {
  name: string;
  promise: Promise<unknown>;
  isResolved: boolean;
  reject(error: Error): void;
  /** ioredis's own timeout timer: cleared by ioredis when the command settles. */
  _commandTimeoutTimer?: NodeJS.Timeout;
  /** Armed by this file (once per command, whichever client sees it first). */
  dqArmed?: true;
  /** Timed out: never written after that, even when a reconnect flushes the offline queue. */
  dqExpired?: true;
  /** Rejected (an error reply or a lost connection): ioredis sets `isResolved` only on success. */
  dqRejected?: true;
  /** Written to a ready connection (its outcome is unknown when it times out). */
  dqSent?: true;
  /** Sent in a cluster pipeline (auto-pipelining): ioredis does not follow its redirections. */
  dqPipelined?: boolean;
  /** The socket it was last written to (a single server's connection). */
  dqStream?: object;
  /** When it was armed (ms). */
  dqArmedAt?: number;
  /** When a cluster node last answered it TRYAGAIN (its slot is migrating), ms. */
  dqMigratingAt?: number;
  /** The wrapper of its rejection that watches for TRYAGAIN (see `watchMigration`). */
  dqWatcher?: (error: Error) => void;
}

/** A pipeline's pseudo-stream: it writes the whole pipeline once each of its commands has been written. */
interface PipelineStream {
  isPipeline: true;
  /** Where it writes: on a cluster, the node (`redis` unset until a command of it was sent to a connection). */
  destination?: { redis?: unknown };
  write(data: string): void;
}

/**
 * Accounts for a refused command in its pipeline: a pipeline writes itself once each of its commands was
 * written, so the refused one is written empty.
 *
 * NOTE: a cluster pipeline takes the connection its node had in the pool when the pipeline was made, or the one
 * its first sent command found. With that node gone from the pool (its connection was lost) and every command
 * refused (expired meanwhile), it has none, and ioredis's last (empty) write threw a TypeError out of the
 * auto-pipeline's timer: an uncaught exception. There was nothing to write.
 */
export function skipInPipeline(stream: unknown): void {
  const pipeline = stream as PipelineStream | undefined;
  if (!pipeline?.isPipeline) return;
  try {
    pipeline.write('');
  } catch (error) {
    if (!pipeline.destination || pipeline.destination.redis) throw error;
  }
}

type SendCommand = (command: Command, stream?: unknown, node?: unknown) => Promise<unknown>;

/** The state of one connection's bounds, shared by its wrapper and the shutdown that tightens them. */
export interface CallBounds {
  /** A call settles within this many ms. */
  timeoutMs: number;
  /** A cluster call answered TRYAGAIN (its slot migrating) settles within this many ms (0: as any call). */
  slotMigrationTimeoutMs?: number;
  /** Set when the application shuts down: no call waits for a reconnect (it rejects at once). */
  closing: boolean;
}

/** ioredis's messages for a connection that is gone (its retries exhausted, closed, not writable). */
const CONNECTION_LOST = /Connection is closed|Stream isn't writeable|Reached the max retries|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EHOSTUNREACH|connect ETIMEDOUT|None of startup nodes is available|Failed to refresh slots cache/;

/** Replies of a cluster whose slot moves or whose master fails over: the command did not run. */
const CLUSTER_REDIRECT = /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN) /;
/** How long a cluster command waits before it is sent again after TRYAGAIN or CLUSTERDOWN (ioredis's delay). */
const CLUSTER_RETRY_MS = 100;

/** A TRYAGAIN this recent (ms) says the call's slot is still migrating: ioredis re-sends it every 100 ms. */
const MIGRATING_RECENTLY_MS = 1000;

/** Redis's refusal of a write at maxmemory (also when a script's first write is refused). */
const OUT_OF_MEMORY = /\bOOM command not allowed/;

/** True for ioredis's errors of a lost connection (as opposed to a reply error of Redis itself). */
export function isConnectionError(error: Error): boolean {
  return !(error instanceof RedisUnavailableError) && CONNECTION_LOST.test(error.message);
}

/** States of a connection with no socket to write to (ioredis reconnects meanwhile). */
const RECONNECTING = new Set(['reconnecting', 'connecting', 'close']);
const SUBSCRIBING = new Set(['subscribe', 'psubscribe', 'ssubscribe']);

function ready(client: RedisClient): boolean {
  return client.status === 'ready';
}

/**
 * Makes every call on `client` settle within `bounds`: a call queued while the connection is down, or sent
 * and unanswered, rejects with `RedisUnavailableError` after `bounds.timeoutMs`; a call that timed out in
 * the offline queue is never sent afterwards (nothing is written late); ioredis's connection errors become
 * `RedisUnavailableError` too. A cluster's node connections are wrapped as they appear, so a node's offline
 * queue drops expired calls as well.
 * NOTE: wraps the instance's `sendCommand`, through which ioredis passes every command, including the
 * offline queue's and a reconnect's re-sends.
 */
export function boundCalls(
  client: RedisClient, connection: string, target: string, bounds: CallBounds, { outage, memory }: { outage?: OutageLog; memory?: MemoryLog } = {},
): void {
  const unavailable = (sent: boolean, reason: string): RedisUnavailableError => tagOutage(new RedisUnavailableError(connection, target, sent, reason), outage);
  const arm = (command: Command, up: boolean): void => {
    command.dqArmed = true;
    // NOTE: ioredis re-subscribes after a reconnect by itself and drops the promise of that call: its
    // rejection (the connection lost again meanwhile) must not be an unhandled one. Callers awaiting their
    // own subscribe still get it; EventSubscriber subscribes again on the next 'ready'.
    if (SUBSCRIBING.has(command.name)) command.promise.catch(() => undefined);
    const reject = command.reject;
    command.reject = (error: Error) => {
      if (command.dqPipelined && !command.dqExpired && CLUSTER_REDIRECT.test(error.message)) {
        // NOTE: a command of a cluster pipeline that another command of it kept from being retried (ioredis
        // retries a pipeline only when all its commands failed alike): the command did not run. It is sent
        // again on its own, where ioredis follows MOVED/ASK and retries TRYAGAIN/CLUSTERDOWN, within its bound.
        command.dqPipelined = false;
        const resend = (): unknown => (client as Cluster).sendCommand(command as never);
        if (/^(TRYAGAIN|CLUSTERDOWN)/.test(error.message)) setTimeout(resend, CLUSTER_RETRY_MS).unref();
        else resend();
        return;
      }
      command.dqRejected = true;
      if (isConnectionError(error)) reject(unavailable(command.dqSent === true, error.message));
      else reject(OUT_OF_MEMORY.test(error.message) ? tagOutage(new RedisOutOfMemoryError(connection, target, error.message), memory) : error);
    };
    const ms = bounds.timeoutMs;
    command.dqArmedAt = Date.now();
    const expire = (): void => {
      if (command.isResolved || command.dqRejected || command.dqExpired) return;
      const now = Date.now();
      const elapsed = now - command.dqArmedAt!;
      const migrationMs = bounds.slotMigrationTimeoutMs ?? 0;
      // NOTE: a slot being migrated answers TRYAGAIN until its keys are all on one node (the cluster is up,
      // the call waits for an operator's reshard): it waits for that up to its own bound, not the bound of a
      // silent server.
      if (!bounds.closing && command.dqMigratingAt !== undefined && now - command.dqMigratingAt < MIGRATING_RECENTLY_MS && elapsed < migrationMs) {
        command._commandTimeoutTimer = setTimeout(() => setImmediate(expire), Math.min(ms, migrationMs - elapsed));
        command._commandTimeoutTimer.unref();
        return;
      }
      command.dqExpired = true;
      const sent = command.dqSent === true;
      const reason = command.dqMigratingAt !== undefined && now - command.dqMigratingAt < MIGRATING_RECENTLY_MS
        ? `its slot still migrating after ${elapsed} ms (TRYAGAIN)`
        : sent ? `no reply within ${ms} ms` : `${up ? 'not sent' : 'not connected'} within ${ms} ms`;
      reject(unavailable(sent, reason));
      dropSilentConnection(client, command.dqStream);
    };
    // NOTE: the timer phase runs before the poll phase: after a stalled event loop (a loaded machine) the
    // reply may be waiting in the socket. setImmediate runs after the poll phase has read it.
    command._commandTimeoutTimer = setTimeout(() => setImmediate(expire), ms);
    command._commandTimeoutTimer.unref();
  };
  wrapSend(client, (command, stream) => {
    if (!command.dqArmed) {
      if (bounds.closing && !ready(client)) {
        command.reject(unavailable(false, 'not connected (shutting down)'));
        return false;
      }
      // NOTE: a call already waited the whole bound for this outage: fail fast until the connection is back,
      // so that an operation of several calls is bounded too. ('connect' is the handshake: let it through.)
      if (outage?.isDown && RECONNECTING.has(client.status)) {
        command.reject(unavailable(false, 'the connection is down (reconnecting)'));
        return false;
      }
      arm(command, ready(client));
    }
    // NOTE: ioredis writes SUBSCRIBE during the connection's handshake (Redis allows it while loading); its
    // reply puts the connection in subscriber mode before ioredis's ready check (INFO), which then fails and
    // ends the connection for good. Such a call waits for 'ready' (its bound still runs).
    if (SUBSCRIBING.has(command.name) && client.status === 'connect' && !stream && !(client instanceof Cluster)) {
      client.once('ready', () => void client.sendCommand(command as never));
      return false;
    }
    return true;
  });
  if (client instanceof Cluster) {
    client.on('+node', (node: Redis) => wrapSend(node, (command) => {
      watchMigration(command);
      return true;
    }));
  }
}

/**
 * Notes on `command` each TRYAGAIN a cluster node answers (its slot is migrating), before ioredis's cluster
 * handler (installed on the command before its first write to a node) schedules the re-send.
 */
function watchMigration(command: Command): void {
  // NOTE: not once per command: a pipelined command sent again on its own gets a new handler from ioredis.
  if (command.reject === command.dqWatcher) return;
  const handle = command.reject;
  command.dqWatcher = (error: Error) => {
    if (error.message.startsWith('TRYAGAIN ')) command.dqMigratingAt = Date.now();
    handle.call(command, error);
  };
  command.reject = command.dqWatcher;
}

/**
 * Wraps `client.sendCommand`: `admit` may refuse a command (it rejected it); an expired command is dropped
 * instead of written. A command written to a ready connection is marked sent.
 */
function wrapSend(client: RedisClient, admit: (command: Command, stream: unknown) => boolean): void {
  const target = client as unknown as { sendCommand: SendCommand };
  const send = target.sendCommand;
  target.sendCommand = function (this: RedisClient, command: Command, stream?: unknown, node?: unknown) {
    if (client instanceof Cluster && (stream as PipelineStream | undefined)?.isPipeline) command.dqPipelined = true;
    if (command.dqExpired || !admit(command, stream)) {
      skipInPipeline(stream);
      return command.promise;
    }
    if (!(client instanceof Cluster)) {
      if (ready(client)) {
        command.dqSent = true;
        corkForTick((client as unknown as { stream?: object }).stream);
      }
      command.dqStream = (client as unknown as { stream?: object }).stream;
    }
    return send.call(this, command, stream, node);
  };
}

/**
 * A call found no answer on an open connection: the server or the network is silent (paused, black-holed,
 * failed over behind a dead route). The socket is destroyed so that ioredis reconnects (and, with Sentinel,
 * asks where the master is now) instead of waiting for TCP to give up (about 15 minutes); what was in flight
 * is re-sent after the reconnect as after any dropped connection, and the scripts' request ids make a
 * repeat harmless. A cluster's nodes are left to the cluster's own handling.
 */
function dropSilentConnection(client: RedisClient, writtenTo: object | undefined): void {
  if (client instanceof Cluster || (client.status !== 'ready' && client.status !== 'connect')) return;
  const stream = (client as unknown as { stream?: { destroy(): void } }).stream;
  // NOTE: a call written to an earlier socket (e.g. the handshake of a connection attempt that a proxy
  // accepted and then closed, left unanswered) says nothing of this one: dropping it cut a healthy
  // connection after each failover, and again for every such call.
  if (stream && stream === writtenTo) stream.destroy();
}

/** Where a connection goes, for messages: never its password. */
export function describeTarget(connection: unknown): string {
  if (typeof connection === 'string') {
    try {
      const url = new URL(connection);
      return `${url.hostname}:${url.port || 6379}${url.pathname.length > 1 ? url.pathname : ''}`;
    } catch {
      return 'an unreadable URL';
    }
  }
  if (connection && typeof connection === 'object') {
    const options = connection as { cluster?: { host?: string; port?: number }[]; sentinels?: unknown[]; name?: string; host?: string; port?: number; path?: string; db?: number };
    if (Array.isArray(options.cluster)) {
      const nodes = options.cluster.slice(0, 3).map((n) => (typeof n === 'object' ? `${n.host ?? '127.0.0.1'}:${n.port ?? 6379}` : String(n)));
      return `cluster ${nodes.join(', ')}${options.cluster.length > 3 ? ', …' : ''}`;
    }
    if (Array.isArray(options.sentinels)) return `sentinel master "${options.name ?? 'mymaster'}"`;
    if (options.path) return options.path;
    return `${options.host ?? '127.0.0.1'}:${options.port ?? 6379}${options.db ? `/${options.db}` : ''}`;
  }
  return '127.0.0.1:6379';
}
