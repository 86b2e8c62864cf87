import { Injectable } from '@nestjs/common';
import type { TaskGroup } from '../interfaces';
import { TaskGroupsService } from '../services/task-groups.service';
import { TaskInspectorService } from '../services/task-inspector.service';
import type { DashboardGroupPage } from './dashboard-api';
import { groupConcurrencyOfRequest, groupPageOfRequest, groupWeightOfRequest } from './groups-request';
import { isKnownOrdered } from './known-type';

/**
 * The dashboard's view of the groups of delay-queue types (`TaskGroupsService`): the groups with the largest
 * backlog page by page, one group, and an operator's changes (pause, resume, its concurrency, its weight).
 * A type this application does not know is a 404; an ordered type is the groups service's
 * `InvalidArgumentError` naming `type` (a 400). A bad body or query is refused before anything is written.
 */
@Injectable()
export class DashboardGroupsService {
  constructor(
    private readonly inspector: TaskInspectorService,
    private readonly groups: TaskGroupsService,
  ) {}

  /** Query `?offset=&limit=` (defaults 0 and 50): one page of the groups with a backlog, largest first. */
  async list(type: string, query: Record<string, unknown>): Promise<DashboardGroupPage> {
    isKnownOrdered(this.inspector, type);
    const { offset, limit } = groupPageOfRequest(query);
    const page = await this.groups.getGroups(type, { offset, limit });
    return { type, offset, limit, total: page.total, groups: page.groups };
  }

  /** One group's counts and settings (a group nobody used: all zero). */
  async get(type: string, group: string): Promise<TaskGroup> {
    isKnownOrdered(this.inspector, type);
    return this.groups.getGroup(type, group);
  }

  /** Pauses or resumes one group (kept in Redis); answers the group as it is then. */
  async setPaused(type: string, group: string, paused: boolean): Promise<TaskGroup> {
    isKnownOrdered(this.inspector, type);
    await (paused ? this.groups.pauseGroup(type, group) : this.groups.resumeGroup(type, group));
    return this.get(type, group);
  }

  /** Body `{ concurrency: n | null }`: the group's own fleet-wide concurrency (null: the type's `groupConcurrency`). */
  async setConcurrency(type: string, group: string, body: unknown): Promise<TaskGroup> {
    isKnownOrdered(this.inspector, type);
    await this.groups.setGroupConcurrency(type, group, groupConcurrencyOfRequest(body));
    return this.get(type, group);
  }

  /** Body `{ weight: n | null }`: the group's weight in the rotation (null: 1). */
  async setWeight(type: string, group: string, body: unknown): Promise<TaskGroup> {
    isKnownOrdered(this.inspector, type);
    await this.groups.setGroupWeight(type, group, groupWeightOfRequest(body));
    return this.get(type, group);
  }
}
