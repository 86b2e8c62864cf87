/**
 * The testing module's stand-in for the application's subscriber connection: channels live in this process.
 * `TaskWaiters` subscribes here as it does to Redis; the engine publishes the ends of tasks here as the
 * scripts publish them (a message is delivered after the current call, as a Redis message would be).
 */
export class MemoryEventSubscriber {
  private readonly handlers = new Map<string, (message: string) => void>();
  private closed = false;

  async subscribe(channel: string, handler: (message: string) => void): Promise<void> {
    this.handlers.set(channel, handler);
  }

  async unsubscribe(channel: string): Promise<void> {
    this.handlers.delete(channel);
  }

  /** No connection, no reconnects: the hook never runs. */
  onReconnect(_hook: () => void): () => void {
    return () => undefined;
  }

  publish(channel: string, message: string): void {
    const handler = this.handlers.get(channel);
    if (handler && !this.closed) queueMicrotask(() => handler(message));
  }

  onApplicationShutdown(): void {
    this.closed = true;
    this.handlers.clear();
  }
}
