import type { Task, TaskHandler } from '../interfaces';
import type { CronStore, TickPayload } from './cron.store';
import { nextTick } from './schedule-definition';

/** The id of the task a schedule's tick submits: the same for every instance, so a tick runs once. */
export const runTaskId = (schedule: string, tick: number): string => `${schedule}@${tick}`;

/**
 * Handles a tick of a schedule (a task of the internal tick type, held under the delay queue's lease by one
 * instance): adds the next tick (after Redis's now, so ticks missed while every instance was down are not
 * run in a burst) and submits the tick's task, `<name>@<tick>`, of the schedule's type. A schedule replaced
 * or removed since does nothing. With `missedTicks: 'skip'`, a tick handled after its following tick was
 * already due is not run.
 */
export class CronTickHandler implements TaskHandler<TickPayload> {
  constructor(private readonly cron: CronStore) {}

  async handle(task: Task<TickPayload>): Promise<void> {
    const tick = task.payload;
    const stored = await this.cron.definition(tick.name);
    if (!stored || stored.version !== tick.version) return;
    const { definition } = stored;
    const now = await this.cron.now();
    const next = nextTick(definition, Math.max(now, tick.tick));
    if ((await this.cron.advance(tick, next)) === 'stale') return;
    const following = nextTick(definition, tick.tick);
    if (definition.missedTicks === 'skip' && following !== null && following <= now) return;
    // NOTE: another Cluster slot than the tick's: the run's slot remembers the ticks submitted, so a tick
    // handled again after a crash anywhere in between submits nothing, even once the first run finished.
    await this.cron.submitRun(definition.type, tick.name, runTaskId(tick.name, tick.tick), tick.tick, definition.payload);
  }
}
