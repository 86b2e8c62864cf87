import type { Task, TaskHandler } from '../interfaces';
import type { CronStore, TickPayload } from './cron.store';
import { lastTickBy, nextTick } from './schedule-definition';

/** The id of the task a schedule's tick submits: the same for every instance, so a tick runs once. */
export const runTaskId = (schedule: string, tick: number): string => `${schedule}@${tick}`;

/**
 * Handles a tick of a schedule (a task of the internal tick type, held under the delay queue's lease by one
 * instance): keeps the schedule's chain of ticks two ahead of now (after Redis's now, so ticks missed while
 * every instance was down are not run in a burst; and the next tick is pending while this one is held, so a
 * holder that dies stalls only its own tick) and submits the run it decides on, task `<name>@<tick>` of the
 * schedule's type, once. A tick late past its following tick runs late when its holder died while the fleet
 * went on (the tick is retried); when every instance was down, the last tick due by now runs once for the
 * missed ones (`missedTicks: 'runOnce'`), the other missed ones do nothing, in whatever order they are
 * handled. With `missedTicks: 'skip'` no late tick runs. A schedule replaced or removed since does nothing.
 */
export class CronTickHandler implements TaskHandler<TickPayload> {
  constructor(private readonly cron: CronStore) {}

  async handle(task: Task<TickPayload>): Promise<void> {
    const tick = task.payload;
    const stored = await this.cron.definition(tick.name);
    if (!stored || stored.version !== tick.version) return;
    const { definition } = stored;
    const now = await this.cron.now();
    const following = nextTick(definition, tick.tick);
    const late = following !== null && following <= now;
    const ahead = nextTick(definition, Math.max(now, tick.tick));
    const plan = {
      late, following, latest: late ? lastTickBy(definition, now, tick.tick) : tick.tick,
      ahead: [ahead, ahead === null ? null : nextTick(definition, ahead)] as [number | null, number | null], retried: task.attempt > 1,
    };
    const decided = await this.cron.advance(tick, plan);
    if (!('run' in decided)) return;
    if (late && definition.missedTicks === 'skip') return;
    // NOTE: another Cluster slot than the tick's: the run's slot remembers the ticks submitted, so a tick
    // handled again after a crash anywhere in between submits nothing, even once the first run finished.
    await this.cron.submitRun(definition.type, tick.name, runTaskId(tick.name, decided.run), decided.run, definition.payload);
  }
}
