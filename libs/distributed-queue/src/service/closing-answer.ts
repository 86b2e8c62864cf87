import type { ServerResponse } from 'http';

/**
 * Once the application shuts down, service mode's answers close their connection. Nest closes the HTTP server
 * after the queue's shutdown, and Node's `server.close()` waits for every kept-alive connection to go idle:
 * a scheduler delivering, or applications submitting through the scheduler, may never let one be idle, and
 * the process would not exit (or only after Node's keep-alive timeout) without `forceCloseConnections`.
 * An answer whose head is not written yet says `Connection: close`; one already streaming (a delivery's
 * results) ends its connection after its last byte.
 */
export function closeAfterAnswer(res: ServerResponse): void {
  if (!res.headersSent) {
    res.setHeader('Connection', 'close');
    return;
  }
  if (res.writableEnded) res.socket?.end();
  else res.once('finish', () => res.socket?.end());
}
