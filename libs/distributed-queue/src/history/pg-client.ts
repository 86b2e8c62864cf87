import type { PoolClient } from 'pg';

/**
 * Marks a pooled connection as checked out; returns the function that gives it back: as is after a
 * success, discarded (closed, not pooled) after a failure, whose transaction the server then rolls back.
 *
 * NOTE: pg emits a checked-out connection's socket errors on the client, and an error event nobody listens
 * to crashes the process. The query under way rejects with the same error, so the event is ignored here.
 */
export function checkOut(client: PoolClient): (failure?: unknown) => void {
  const ignore = (): void => undefined;
  client.on('error', ignore);
  return (failure) => {
    if (failure === undefined) {
      client.removeListener('error', ignore);
      client.release();
    } else {
      client.release(failure instanceof Error ? failure : true);
    }
  };
}
