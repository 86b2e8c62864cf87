import { Injectable, NotFoundException } from '@nestjs/common';
import { InvalidArgumentError } from '../errors';
import { quote } from '../errors/quote';
import type { TaskState } from '../interfaces';
import { QueueControlService } from '../services/queue-control.service';
import { TaskInspectorService } from '../services/task-inspector.service';
import { TaskSubmitService } from '../services/task-submit.service';
import { dueOfRequest } from '../services/task-input';
import type { TaskHistoryRecord } from '../history/history-event';
import { TaskScheduleService } from '../cron/task-schedule.service';
import { TaskHistoryService } from '../history/task-history.service';
import type { DashboardOverview, DashboardRoute, DashboardTaskDetail, DashboardTaskPage } from './dashboard-api';
import { DashboardLimitsService } from './dashboard-limits.service';
import { isKnownOrdered } from './known-type';

/** What a bulk dead-letter action applies to. */
export interface DeadSelection {
  ids?: unknown;
  all?: unknown;
}

/** Dead letters re-driven per call of a re-drive of all (looped until none is left). */
const REDRIVE_BATCH = 1000;

const intParam = (value: unknown, name: string, fallback: number): number => {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n)) throw new InvalidArgumentError(name, `must be an integer, got ${quote(value)}`);
  return n;
};

/**
 * The dashboard's admin API over the library's public services: what the page shows and the actions it
 * offers (the limits' are `DashboardLimitsService`'s, the groups' `DashboardGroupsService`'s). Only types
 * this application knows are served (anything else is a 404), so that a typo in a URL cannot act on another
 * application's queue.
 */
@Injectable()
export class DashboardApiService {
  constructor(
    private readonly inspector: TaskInspectorService,
    private readonly control: QueueControlService,
    private readonly submitter: TaskSubmitService,
    private readonly history: TaskHistoryService,
    private readonly schedules: TaskScheduleService,
    private readonly limits: DashboardLimitsService,
  ) {}

  async overview(): Promise<DashboardOverview> {
    const known = this.inspector.listTypes();
    const names = known.map((t) => t.type);
    // NOTE: the ordered types share their route queue: its pause flags are read once for all of them.
    let routePaused: Promise<boolean> | undefined;
    const isPaused = ({ type, ordered }: { type: string; ordered: boolean }) =>
      ordered ? (routePaused ??= this.control.isPaused(type)) : this.control.isPaused(type);
    const [counts, activity, paused, route, schedules, limits] = await Promise.all([
      this.inspector.getCountsOf(names),
      this.inspector.getActivityOf(names, 60_000),
      Promise.all(known.map(isPaused)),
      known.some((t) => t.ordered) ? this.inspector.getRouteStatus().catch(() => undefined) : undefined,
      this.schedules.list(),
      this.limits.of(known.filter((t) => !t.ordered).map((t) => t.type)),
    ]);
    const types = known.map(({ type, ordered }, i) => {
      const recent = activity.get(type)!.counts;
      const perMinute = { completed: recent.completed ?? 0, failed: recent.failed ?? 0 };
      return { type, ordered, paused: paused[i], counts: counts.get(type)!, perMinute, limits: limits.get(type) };
    });
    return {
      now: Date.now(),
      types,
      route: route && { qId: route.qId, partitions: route.partitions.length, machines: route.machines.length },
      history: this.history.enabled,
      schedules: schedules.map(({ name, cron, everyMs, timeZone, type, nextTickAt, lastTickAt }) => ({
        name, type, nextTickAt, lastTickAt, rule: cron !== undefined ? `${cron} (${timeZone})` : `every ${everyMs} ms`,
      })),
    };
  }

  /** A page from a cursor (a page's `next`; none: the first page): a deep page never walks the tasks before it. */
  async tasks(type: string, query: Record<string, unknown>): Promise<DashboardTaskPage> {
    const ordered = this.known(type);
    const state = String(query.state ?? 'ready') as Exclude<TaskState, 'unknown' | 'pending'>;
    if (query.offset !== undefined) throw new InvalidArgumentError('offset', 'pages go by cursor: send the "next" of the page before as cursor=');
    const limit = intParam(query.limit, 'limit', 50);
    const cursor = typeof query.cursor === 'string' && query.cursor !== '' ? query.cursor : null;
    const search = typeof query.id === 'string' && query.id !== '';
    const [page, counts] = await Promise.all([
      search ? this.search(type, ordered, query.id as string).then((tasks) => ({ tasks, next: null })) : this.inspector.listTaskPage(type, state, { cursor: cursor ?? undefined, limit }),
      this.inspector.getCounts(type),
    ]);
    const total = state in counts ? Number(counts[state as keyof typeof counts]) : 0;
    return { type, state, cursor, next: page.next, limit, total, tasks: page.tasks };
  }

  private async search(type: string, ordered: boolean, id: string) {
    if (ordered) throw new InvalidArgumentError('id', 'ordered tasks are not looked up by id: browse their states');
    const task = await this.inspector.getTask(type, id);
    return task.state === 'unknown' ? [] : [task];
  }

  async task(type: string, id: string): Promise<DashboardTaskDetail> {
    if (this.known(type)) throw new InvalidArgumentError('type', `"${type}" is ordered: its tasks are shown in the listings`);
    const task = await this.inspector.getTask(type, id);
    if (task.state === 'unknown') throw new NotFoundException(`no task "${id}" of type "${type}"`);
    return task;
  }

  /** The task's history row (404 without one; 404 when the history is not configured). */
  async taskHistory(type: string, id: string): Promise<TaskHistoryRecord> {
    this.known(type);
    if (!this.history.enabled) throw new NotFoundException('the task history is not configured');
    const row = await this.history.getHistory(type, id);
    if (!row) throw new NotFoundException(`no history of task "${id}" of type "${type}"`);
    return row;
  }

  async runNow(type: string, id: string): Promise<{ ok: boolean }> {
    this.delayOnly(type, 'run now');
    return { ok: await this.submitter.reschedule(type, id, { delay: 0 }) };
  }

  /** Body `{ delayMs }` or `{ runAt }`, checked as a submit's delay and runAt are (no coercion). */
  async reschedule(type: string, id: string, body: unknown): Promise<{ ok: boolean }> {
    this.delayOnly(type, 'reschedule');
    const due = dueOfRequest(body);
    return { ok: await this.submitter.reschedule(type, id, 'at' in due ? { runAt: due.at } : { delay: due.delay }) };
  }

  async cancel(type: string, id: string): Promise<{ result: string }> {
    this.delayOnly(type, 'cancel');
    return { result: await this.submitter.cancel(type, id) };
  }

  async redriveDead(type: string, selection: DeadSelection): Promise<{ count: number }> {
    const ordered = this.known(type);
    const ids = this.selected(selection, ordered);
    if (ids) return { count: await this.inspector.redriveDead(type, ids) };
    // NOTE: in bounded calls, a batch (per partition of an ordered type) each, until a call finds less than one
    // batch: a letter that dies again meanwhile cannot keep the loop going
    const batch = ordered ? () => this.inspector.redriveOrderedDead(REDRIVE_BATCH) : () => this.inspector.redriveDead(type, [], REDRIVE_BATCH);
    let count = 0;
    for (let moved = REDRIVE_BATCH; moved >= REDRIVE_BATCH; count += moved) moved = await batch();
    return { count };
  }

  async deleteDead(type: string, selection: DeadSelection): Promise<{ count: number }> {
    const ids = this.selected(selection, this.known(type));
    if (ids) return { count: await this.inspector.deleteDead(type, ids) };
    return { count: await this.control.purgeDead(type) };
  }

  async setPaused(type: string, paused: boolean): Promise<{ paused: boolean }> {
    this.known(type);
    await (paused ? this.control.pause(type) : this.control.resume(type));
    return { paused: await this.control.isPaused(type) };
  }

  async route(): Promise<DashboardRoute> {
    if (!this.inspector.listTypes().some((t) => t.ordered)) throw new NotFoundException('this application has no ordered types');
    return this.inspector.getRouteStatus();
  }

  /** Whether a known type is ordered; a 404 for a type this application does not know. */
  private known(type: string): boolean {
    return isKnownOrdered(this.inspector, type);
  }

  private delayOnly(type: string, action: string): void {
    if (this.known(type)) throw new InvalidArgumentError('type', `"${type}" is ordered: ${action} applies to delay-queue tasks`);
  }

  /** The ids of a selection, or undefined for all; ordered dead letters go all at once. */
  private selected(selection: DeadSelection, ordered: boolean): string[] | undefined {
    if (selection?.all === true) return undefined;
    const ids = selection?.ids;
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > 1000 || !ids.every((id) => typeof id === 'string')) {
      throw new InvalidArgumentError('ids', 'must be a list of 1 to 1000 task ids, or send { "all": true }');
    }
    if (ordered) throw new InvalidArgumentError('ids', 'ordered dead letters are re-driven or deleted all at once: send { "all": true }');
    return ids;
  }
}
