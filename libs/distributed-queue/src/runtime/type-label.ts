import { CRON_TICK_TYPE, isInternalType } from '../distributed-queue.constants';

const ROUTE_DELAY_PREFIX = '__route__.';
const CRON_RUN_PREFIX = `${CRON_TICK_TYPE}.`;

/**
 * How logs and health messages name a type: a user's type as it is; the library's own types by what they do
 * (`__route__.q`: the delayed ordered tasks of route queue "q"; `__cron__.n`: schedule "n"; `__cron__`:
 * schedule ticks, or with a tick task's id `<schedule>@<version>@<tick>`, the tick of that schedule).
 */
export function typeLabel(type: string, taskId?: string): string {
  if (!isInternalType(type)) return type;
  if (type.startsWith(ROUTE_DELAY_PREFIX)) return `delayed ordered tasks of route queue "${type.slice(ROUTE_DELAY_PREFIX.length)}"`;
  if (type.startsWith(CRON_RUN_PREFIX)) return `schedule "${type.slice(CRON_RUN_PREFIX.length)}"`;
  // NOTE: schedule names have no '@' (schedule-definition.ts): a tick's id starts with its schedule's name.
  const at = taskId?.indexOf('@') ?? -1;
  return taskId && at > 0 ? `tick of schedule "${taskId.slice(0, at)}"` : 'schedule ticks';
}
