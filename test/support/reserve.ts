import { DelayQueueStore } from 'nestjs-distributed-queue/delay/delay-queue.store';
import type { QueueApp } from './queue-app';

/** Take options of a test's own reserves (as a worker's). */
export const TAKE = { leaseMs: 30_000, maxAttempts: 3, keepDone: 0, recoverLimit: 10 };

/**
 * One reserve of one task, as a worker's (it moves the due tasks of priorities and groups it meets on the way);
 * `ack`: acknowledged at once. Returns the ids reserved.
 */
export async function reserveOne(app: QueueApp, type: string, ack = true): Promise<string[]> {
  const store = app.app.get(DelayQueueStore);
  const { reserved } = await store.take(type, { count: 1, ...TAKE }, [], 'c.test', `r-${Date.now()}-${Math.random()}`);
  if (ack) await store.take(type, { count: 0, ...TAKE }, reserved.map((r) => [r.id, r.token]), 'c.test', `a-${Date.now()}-${Math.random()}`);
  return reserved.map((r) => r.id);
}
