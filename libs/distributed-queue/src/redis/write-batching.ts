/** The part of a socket that `corkForTick` uses. */
interface Corkable {
  writable: boolean;
  writableCorked: number;
  cork(): void;
  uncork(): void;
}

const uncork = (stream: Corkable): void => stream.uncork();

/**
 * Holds a connection's writes back until the end of the current tick: the commands written meanwhile leave
 * in one system call (`writev`) instead of one each, and Redis reads them in one go. Called before each
 * command's write; a no-op while the socket is already held or not writable.
 *
 * NOTE: why: a burst (a `submitFlow`'s calls, a flush of settles, the acks riding on a take) wrote one
 * command per system call; those calls were 5 % of the process's CPU in workload 15, and a read each on
 * Redis's side. `process.nextTick` runs before any I/O: nothing waits longer than the code that wrote it.
 */
export function corkForTick(stream: unknown): void {
  const socket = stream as Corkable | undefined;
  if (!socket || typeof socket.cork !== 'function' || !socket.writable || socket.writableCorked > 0) return;
  socket.cork();
  process.nextTick(uncork, socket);
}
