import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { reportFailure } from '../redis/outage-log';
import { DISTRIBUTED_QUEUE_RESOLVED_OPTIONS } from '../distributed-queue.constants';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { closeRedisClient } from '../redis/redis-connection';
import { RedisConnections } from '../redis/redis-connections';
import type { RedisClient } from '../redis/script-loader';
import { NoRedisConnectionError } from '../errors';

/**
 * The application's one subscriber connection: both engines subscribe their channels here and get the
 * messages of their own channel. It connects at the first subscription (a producer-only application opens
 * none) and runs the reconnect hooks after every reconnect (ioredis subscribes again by itself), so that
 * an engine can look for work it may have missed.
 */
@Injectable()
export class EventSubscriber implements OnApplicationShutdown {
  private client?: RedisClient;
  private readonly handlers = new Map<string, (message: string) => void>();
  private readonly reconnectHooks = new Set<() => void>();
  private connectedOnce = false;
  private readonly logger = new Logger('DistributedQueue');

  constructor(
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    private readonly connections: RedisConnections,
  ) {}

  /** Sends the messages of `channel` to `handler` (one handler per channel). */
  async subscribe(channel: string, handler: (message: string) => void): Promise<void> {
    this.handlers.set(channel, handler);
    await this.connection().subscribe(channel);
  }

  /** Stops the messages of `channel`. */
  async unsubscribe(channel: string): Promise<void> {
    if (!this.handlers.delete(channel) || !this.client) return;
    await this.client.unsubscribe(channel);
  }

  /** Runs `hook` after each reconnect of the subscriber connection. Returns a function that removes it. */
  onReconnect(hook: () => void): () => void {
    this.reconnectHooks.add(hook);
    return () => this.reconnectHooks.delete(hook);
  }

  private connection(): RedisClient {
    if (this.client) return this.client;
    if (this.options.service?.url) throw new NoRedisConnectionError('subscribe');
    const client = this.connections.open('subscriber', 'subscriber');
    client.on('message', (channel: string, message: string) => this.handlers.get(channel)?.(message));
    client.on('ready', () => {
      if (this.connectedOnce) {
        // NOTE: ioredis re-subscribes by itself, but forgets the channels when that call fails (the
        // connection lost again at once): subscribe again here too (harmless when subscribed).
        const channels = [...this.handlers.keys()];
        if (channels.length > 0) client.subscribe(...channels).catch((error: unknown) => reportFailure(this.logger, 'subscribing again', error));
        for (const hook of this.reconnectHooks) hook();
      }
      this.connectedOnce = true;
    });
    this.client = client;
    return client;
  }

  async onApplicationShutdown(): Promise<void> {
    this.handlers.clear();
    this.reconnectHooks.clear();
    if (this.client) await closeRedisClient(this.client);
  }
}
