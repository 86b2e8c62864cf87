import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { HttpReply } from './dashboard-error.filter';

/**
 * Once the application shuts down, the dashboard's answers close their connection (`Connection: close`):
 * an answer to a request that was in flight when the HTTP server began to close would otherwise leave a
 * keep-alive connection that holds `app.close()` for Node's keep-alive timeout (5 s).
 */
@Injectable()
export class DashboardClosing implements BeforeApplicationShutdown {
  private closing = false;

  beforeApplicationShutdown(): void {
    this.closing = true;
  }

  /** Marks `reply` to close its connection when the application is shutting down. */
  mark(reply: HttpReply): void {
    if (this.closing) reply.header('Connection', 'close');
  }
}
