import { Injectable } from '@nestjs/common';
import { QueueControlService } from '../services/queue-control.service';
import { TaskInspectorService } from '../services/task-inspector.service';
import type { DashboardLimits } from './dashboard-api';
import { isKnownOrdered } from './known-type';
import { concurrencyOfRequest, rateLimitOfRequest } from './limits-request';

/** The window of a type's recent rate: short enough to follow a change of the rate limit within seconds. */
export const RATE_WINDOW_MS = 5000;

/**
 * The dashboard's view of the delay-queue types' fleet-wide limits (`QueueControlService`): what is in force
 * and what it holds back, the recent rate, and an operator's changes. Ordered types have no limits: the
 * control service refuses them (`InvalidArgumentError` naming `type`, a 400).
 */
@Injectable()
export class DashboardLimitsService {
  constructor(
    private readonly inspector: TaskInspectorService,
    private readonly control: QueueControlService,
  ) {}

  /**
   * The limits of `types` (delay-queue types) by type: a few keys read per type, and one read of their event
   * streams' last 5 s for the recent rate.
   */
  async of(types: readonly string[]): Promise<Map<string, DashboardLimits>> {
    if (types.length === 0) return new Map();
    const [limits, activity] = await Promise.all([
      Promise.all(types.map((type) => this.control.getLimits(type))),
      this.inspector.getActivityOf(types, RATE_WINDOW_MS),
    ]);
    return new Map(types.map((type, i) => {
      const { completed = 0, failed = 0 } = activity.get(type)?.counts ?? {};
      return [type, { ...limits[i], recentPerSecond: ((completed + failed) * 1000) / RATE_WINDOW_MS }];
    }));
  }

  /** One type's limits. @throws UnknownTaskTypeError (404); InvalidArgumentError for an ordered type */
  async get(type: string): Promise<DashboardLimits> {
    isKnownOrdered(this.inspector, type);
    return (await this.of([type])).get(type)!;
  }

  /** Body `{ rateLimit: { max, perMs, burst? } | null }`: an operator's rate limit over the options (null: none). */
  async setRateLimit(type: string, body: unknown): Promise<DashboardLimits> {
    isKnownOrdered(this.inspector, type);
    await this.control.setRateLimit(type, rateLimitOfRequest(body));
    return this.get(type);
  }

  /** Body `{ globalConcurrency: n | null }`: an operator's fleet-wide concurrency over the options (null: none). */
  async setGlobalConcurrency(type: string, body: unknown): Promise<DashboardLimits> {
    isKnownOrdered(this.inspector, type);
    await this.control.setGlobalConcurrency(type, concurrencyOfRequest(body));
    return this.get(type);
  }

  /** Drops the operator's overrides: the workers' options hold again. */
  async reset(type: string): Promise<DashboardLimits> {
    isKnownOrdered(this.inspector, type);
    await this.control.resetLimits(type);
    return this.get(type);
  }
}
