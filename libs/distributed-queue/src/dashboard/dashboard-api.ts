import type { FlowInfo, FlowNodeInfo, RouteStatus, TaskCounts, TaskErrorInfo, TaskGroup, TaskInfo, TypeLimits } from '../interfaces';

/**
 * The dashboard's admin HTTP API, under the path the application mounts it at (`<base>`, e.g. `/queues`).
 * Every request needs the dashboard's auth (a `token` option: `Authorization: Bearer <token>` or the
 * HttpOnly cookie `<base>/login?token=...` sets; or the application's guard); without it: 401.
 * Every POST needs the header `x-csrf-token` equal to the cookie `dq_csrf` (set with the page), unless it is
 * authenticated by a Bearer header. Actions answer 200. Errors answer `{ error: { name, message } }` with 400 (bad input),
 * 401, 403 (CSRF) or 404.
 *
 *   GET  <base>/                                   the page (HTML shell; assets under <base>/assets/)
 *   GET  <base>/login?token=...                    signs the browser in (cookie), 303 to <base>/
 *   GET  <base>/api/overview                       DashboardOverview
 *   GET  <base>/api/types/:type/tasks?state=&cursor=&limit=&id=   DashboardTaskPage (id: search by id, delay types;
 *                                                  cursor: the `next` of the page before; offset= is a 400)
 *   GET  <base>/api/types/:type/tasks/:id          DashboardTaskDetail (404 when unknown; 400 for an ordered type:
 *                                                  its tasks are shown in the listings)
 *   GET  <base>/api/types/:type/tasks/:id/history  TaskHistoryRecord (404 without the history option or a row)
 *   POST <base>/api/types/:type/tasks/:id/run-now  { ok: boolean }       (delay types; waiting tasks)
 *   POST <base>/api/types/:type/tasks/:id/reschedule  body { delayMs } | { runAt }  -> { ok: boolean }
 *   POST <base>/api/types/:type/tasks/:id/cancel   { result: CancelResult }
 *   POST <base>/api/types/:type/dead/redrive       body { ids: string[] } | { all: true } -> { count }
 *   POST <base>/api/types/:type/dead/delete        body { ids: string[] } | { all: true } -> { count }
 *                                                  (ordered types: { all: true } only, for the whole route queue)
 *   POST <base>/api/types/:type/pause | /resume    { paused: boolean }
 *   GET  <base>/api/types/:type/limits             DashboardLimits (delay types; an ordered type: 400 InvalidArgumentError)
 *   POST <base>/api/types/:type/limits/rate-limit  body { rateLimit: { max, perMs, burst? } | null } -> DashboardLimits
 *   POST <base>/api/types/:type/limits/global-concurrency  body { globalConcurrency: n | null } -> DashboardLimits
 *   POST <base>/api/types/:type/limits/reset       DashboardLimits (the operator's overrides dropped)
 *                                                  (QueueControlService.setRateLimit / setGlobalConcurrency /
 *                                                  resetLimits: null is "no limit" over the options until a reset;
 *                                                  a bad body is a 400 InvalidArgumentError naming the field,
 *                                                  and nothing is written)
 *   GET  <base>/api/types/:type/groups?offset=&limit=   DashboardGroupPage (delay types: the groups with a backlog,
 *                                                  the largest first; offset 0 and limit 50 by default, limit at
 *                                                  most 1000; TaskGroupsService.getGroups)
 *   GET  <base>/api/types/:type/groups/:group      TaskGroup (with `due`; a group nobody used: all zero)
 *   POST <base>/api/types/:type/groups/:group/pause | /resume   TaskGroup (kept in Redis)
 *   POST <base>/api/types/:type/groups/:group/concurrency  body { concurrency: n | null } -> TaskGroup
 *   POST <base>/api/types/:type/groups/:group/weight       body { weight: n | null } -> TaskGroup
 *                                                  (:group URL-encoded, 1 to 256 characters; null: back to the
 *                                                  type's groupConcurrency / weight 1; an ordered type, a bad
 *                                                  group, query or body: a 400 InvalidArgumentError naming the
 *                                                  field, and nothing is written)
 *   GET  <base>/api/route                          DashboardRoute (404 without a route queue)
 *   GET  <base>/api/flows?offset=&limit=           DashboardFlowPage (the newest flows first; offset 0 and
 *                                                  limit 50 by default, limit at most 200; TaskFlowService.listFlows)
 *   GET  <base>/api/flows/:id                      DashboardFlow (every node; 404 for an unknown or expired flow)
 *   POST <base>/api/flows/:id/cancel               FlowCancelResult { cancelled, cancelRequested } (404 for
 *                                                  an unknown flow; an ended one: both 0)
 *                                                  (:id 1 to 64 characters of A-Z a-z 0-9 _ . -: else a 400
 *                                                  InvalidFlowError; a bad query: 400 InvalidArgumentError)
 */
export interface DashboardOverview {
  /** When the reading was made (ms, the server's clock). */
  now: number;
  /** Every task type, with its counts. */
  types: DashboardTypeSummary[];
  /** The route queue, when the application has one. */
  route?: {
    /** The route queue's id. */
    qId: string;
    /** Its partition count. */
    partitions: number;
    /** Its registered machines. */
    machines: number;
  };
  /** Whether a task history store is configured (the task view then offers the history). */
  history: boolean;
  /** The schedules (distributed cron) of the queue's Redis. */
  schedules: DashboardSchedule[];
}

/** A schedule as the overview shows it. */
export interface DashboardSchedule {
  /** The schedule's name. */
  name: string;
  /** The cron expression (with its time zone) or `every <n> ms`. */
  rule: string;
  /** The task type each tick submits. */
  type: string;
  /** Epoch ms, or null when the schedule has no more ticks. */
  nextTickAt: number | null;
  /** The last tick handled (epoch ms), or null. */
  lastTickAt: number | null;
}

/** A task type as the overview shows it. */
export interface DashboardTypeSummary {
  /** The task type. */
  type: string;
  /** Whether it is an ordered type (route queue). */
  ordered: boolean;
  /** Whether it is paused. */
  paused: boolean;
  /** Its tasks by state. */
  counts: TaskCounts;
  /**
   * Tasks completed and failed attempts in the last 60 s, from the type's event stream. Completions are
   * logged while someone follows the stream: the dashboard asks for them while it is open.
   */
  perMinute: {
    /** Tasks completed. */
    completed: number;
    /** Failed attempts. */
    failed: number;
  };
  /** Delay-queue types: the fleet-wide limits and the recent rate (ordered types have none). */
  limits?: DashboardLimits;
}

/**
 * A delay-queue type's fleet-wide limits (`QueueControlService.getLimits`: configured, overridden by an
 * operator, in force; its live leases; `limitedUntil`) with its recent rate.
 */
export interface DashboardLimits extends TypeLimits {
  /**
   * Tasks of the type that finished (completed, or a failed attempt) per second over the last 5 s, from its
   * event stream: at a steady state, the rate they start at. Completions are logged while the dashboard is
   * open (see `perMinute`).
   */
  recentPerSecond: number;
}

/** One page of a delay-queue type's groups with a backlog, the largest first (`TaskGroupsService.getGroups`). */
export interface DashboardGroupPage {
  /** The task type. */
  type: string;
  /** The position of the page's first group (0: the largest backlog). */
  offset: number;
  /** The most groups the page holds. */
  limit: number;
  /** Groups of the type with waiting tasks. */
  total: number;
  /** The page's groups. */
  groups: TaskGroup[];
}

/**
 * One page of tasks of a type in a state (see `TaskInspectorService.listTaskPage`): pages go by cursor, so
 * a deep page is read in bounded steps that never block Redis.
 */
export interface DashboardTaskPage {
  /** The task type. */
  type: string;
  /** The state listed. */
  state: string;
  /** The cursor this page started from (null: the first page). */
  cursor: string | null;
  /** The cursor of the page after this one (null: this is the last). */
  next: string | null;
  /** The most tasks the page holds. */
  limit: number;
  /** Tasks in that state (from the counts; with `id`, still the state's count: `tasks` holds the match). */
  total: number;
  /** The page's tasks. */
  tasks: TaskInfo[];
}

/** One task, with what the inspector knows and its lease when it runs. */
export interface DashboardTaskDetail extends TaskInfo {
  /** Running delay-queue tasks: when the current lease expires (ms, Redis clock) unless renewed. */
  leaseExpiresAt?: number;
  lastError?: TaskErrorInfo;
}

/** The route queue as the partitions × machines map shows it. */
export interface DashboardRoute extends RouteStatus {
  /** The machine holding the scheduler lock, if any. */
  lockHolder: string | null;
}

/** One page of the newest flows (`TaskFlowService.listFlows`): their state and counts, no nodes. */
export interface DashboardFlowPage {
  /** The position of the page's first flow (0: the newest). */
  offset: number;
  /** The most flows the page holds. */
  limit: number;
  /** Whether flows follow this page. */
  more: boolean;
  /** The page's flows, newest first. */
  flows: Omit<FlowInfo, 'nodes'>[];
}

/**
 * A node as the dashboard sends it: `result` only when its JSON is at most 1 KiB, else `resultBytes`
 * (its size): a flow of thousands of nodes stays a bounded read.
 */
export type DashboardFlowNode = FlowNodeInfo & {
  /** The size of its result's JSON in bytes, when it is more than 1 KiB (`result` is then absent). */
  resultBytes?: number;
};

/** A flow with every node (`TaskFlowService.getFlow`). */
export interface DashboardFlow extends Omit<FlowInfo, 'nodes'> {
  /** Every node, in the order submitFlow was given them. */
  nodes: DashboardFlowNode[];
}
