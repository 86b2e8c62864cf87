import type { Logger } from '@nestjs/common';
import type { DelayQueueStore } from '../delay/delay-queue.store';

/**
 * What an ordered type left in its delay queue: tasks submitted while an earlier deployment ran it as a
 * delay-queue type (or by a producer that still does). Ordered workers take tasks from the route queue's
 * partitions only, so these would wait unseen: `getCounts` of an ordered type counts its partitions.
 */
export const STRANDED_DELAY_TASKS = (type: string, waiting: number, running: number, dead: number): string =>
  `Ordered type "${type}" has ${waiting} waiting, ${running} running and ${dead} dead task(s) in its delay queue, from when it was ` +
  'a delay-queue type (an earlier deployment, or a producer that still declares it so): ordered workers do not run them. ' +
  'Keep a deployment with its delay-queue worker until they are done, or submit them again with submitOrdered (docs/production.md, "Changing a type\'s kind")';

/**
 * Warns once per ordered type whose delay queue holds tasks (waiting, running or dead). A read error is not
 * a start-up failure: the check is skipped (the next start checks again).
 */
export async function warnStrandedDelayTasks(store: DelayQueueStore, orderedTypes: readonly string[], logger: Pick<Logger, 'warn'>): Promise<void> {
  await Promise.all(
    orderedTypes.map(async (type) => {
      const counts = await store.counts(type).catch(() => null);
      if (!counts) return;
      const waiting = counts.delayed + counts.ready;
      if (waiting + counts.running + counts.dead > 0) logger.warn(STRANDED_DELAY_TASKS(type, waiting, counts.running, counts.dead));
    }),
  );
}
