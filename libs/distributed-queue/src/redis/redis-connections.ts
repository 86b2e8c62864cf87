import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { DISTRIBUTED_QUEUE_RESOLVED_OPTIONS } from '../distributed-queue.constants';
import { RedisStartupError } from '../errors';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { describeTarget, type CallBounds } from './bounded-calls';
import { createRedisClient, type ConnectionLogger } from './redis-connection';
import { checkEvictionPolicy } from './server-memory';
import type { RedisClient } from './script-loader';

/**
 * What shutdown may take beyond `shutdownTimeoutMs` (the grace of running tasks): the library's last Redis
 * calls (hand-backs, leaving, last acks) share it; at its end every connection is cut.
 */
export const CLOSE_MARGIN_MS = 2000;

/**
 * The application's Redis connections (commands, subscriber, event-stream reader) and their shared bounds:
 * every call settles within `redisTimeoutMs`; start-up waits at most `startupTimeoutMs` for the commands
 * connection; from the start of shutdown no call waits for a reconnect, and `shutdownTimeoutMs` +
 * `CLOSE_MARGIN_MS` after it every connection is cut, so that `app.close()` is bounded whatever Redis does.
 */
@Injectable()
export class RedisConnections implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger: ConnectionLogger = new Logger('DistributedQueue');
  private readonly bounds: CallBounds;
  private readonly clients: { client: RedisClient; role: string; name: string }[] = [];
  private deadline?: NodeJS.Timeout;

  constructor(@Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions) {
    this.bounds = { timeoutMs: options.redisTimeoutMs, slotMigrationTimeoutMs: options.slotMigrationTimeoutMs, closing: false };
  }

  /** Where the connections go (for messages; never the password). */
  get target(): string {
    return describeTarget(this.options.connection);
  }

  /** Opens a connection of `role` named `dq:<keyPrefix>:<suffix>` under the shared bounds. */
  open(role: 'commands' | 'subscriber' | 'reader', suffix: string): RedisClient {
    const name = `dq:${this.options.keyPrefix}:${suffix}`;
    const client = createRedisClient(this.options.connection, role, name, this.logger, this.bounds, this.target);
    this.clients.push({ client, role, name });
    return client;
  }

  /**
   * Start-up: the commands connection must be ready within `startupTimeoutMs`, and the server must not
   * evict keys (unless `allowEviction`). On failure every connection is closed (Nest does not close an application whose start-up failed) and `RedisStartupError` is thrown.
   * With `waitForRedis` it starts connecting and returns.
   */
  async onModuleInit(): Promise<void> {
    const commands = this.clients.find((c) => c.role === 'commands');
    if (!commands) return;
    if (this.options.waitForRedis) {
      // NOTE: start-up goes on; the parts start once it is ready (StartupSteps). ioredis retries meanwhile.
      if (commands.client.status === 'wait') commands.client.connect().catch(() => undefined);
      return;
    }
    try {
      await this.connect(commands.client, commands.name);
      await this.checkServer(commands.client);
    } catch (error) {
      this.cutAll();
      throw error;
    }
  }

  /** Checks what the server must be for the queues to hold (see `checkEvictionPolicy`). */
  checkServer(client: RedisClient): Promise<void> {
    return checkEvictionPolicy(client, this.target, this.options.allowEviction, this.logger);
  }

  /**
   * Connects `client` and waits until it is ready, at most `startupTimeoutMs`; rejects with
   * `RedisStartupError` naming the target and the last connection error. ioredis keeps retrying meanwhile,
   * so a server that comes up within the bound is used.
   */
  async connect(client: RedisClient, name: string): Promise<void> {
    if (this.bounds.closing) throw new RedisStartupError(name, this.target, false, 'the application is closing');
    if (client.status === 'ready') return;
    const ms = this.options.startupTimeoutMs;
    let lastError = '';
    const onError = (error: Error): void => void (lastError = error.message);
    let timer: NodeJS.Timeout | undefined;
    let onReady: (() => void) | undefined;
    let onEnd: (() => void) | undefined;
    client.on('error', onError);
    try {
      await new Promise<void>((resolve, reject) => {
        const fail = (why: string): void => reject(new RedisStartupError(name, this.target, false, `${why}${lastError ? `: ${lastError}` : ''}`));
        onReady = resolve;
        // NOTE: closed meanwhile, e.g. by the check of the database index, which reports its own error.
        onEnd = () => fail('closed before it was ready');
        client.once('ready', onReady);
        client.once('end', onEnd);
        timer = setTimeout(() => fail(`not ready within startupTimeoutMs (${ms} ms)`), ms);
        if (client.status === 'wait') client.connect().catch(() => undefined);
      });
    } finally {
      clearTimeout(timer);
      client.off('error', onError);
      if (onReady) client.off('ready', onReady);
      if (onEnd) client.off('end', onEnd);
    }
  }

  /** Start-up failed elsewhere (Nest then closes nothing): every connection is cut, and none connects again. */
  abortStartup(): void {
    this.bounds.closing = true;
    this.cutAll();
  }

  /** Shutdown begins: calls stop waiting for reconnects; the deadline that cuts every connection is armed. */
  beforeApplicationShutdown(): void {
    if (this.bounds.closing) return;
    this.bounds.closing = true;
    this.deadline = setTimeout(() => this.cutAll(), this.options.shutdownTimeoutMs + CLOSE_MARGIN_MS);
    this.deadline.unref();
  }

  onApplicationShutdown(): void {
    clearTimeout(this.deadline);
  }

  /** Cuts every connection: calls in flight reject at once (`RedisUnavailableError`). */
  private cutAll(): void {
    for (const { client } of this.clients) if (client.status !== 'end') client.disconnect();
  }
}
