import { Module, type DynamicModule } from '@nestjs/common';
import { DashboardClosing } from './dashboard-closing';
import { ModuleRef } from '@nestjs/core';
import { DashboardSessions } from './dashboard-sessions';
import { DashboardApiService } from './dashboard-api.service';
import { DashboardFlowsService } from './dashboard-flows.service';
import { DashboardGroupsService } from './dashboard-groups.service';
import { DashboardLimitsService } from './dashboard-limits.service';
import { DASHBOARD_OPTIONS, DashboardAuthGuard } from './dashboard-auth.guard';
import { dashboardController } from './dashboard.controller';
import { resolveDashboardOptions, type DashboardOptions } from './dashboard-options';

/**
 * An operator's dashboard for both engines: a web page and an admin HTTP API at `path`, served by this
 * application. Import it next to `DistributedQueueModule` (which must be global, its default). Nothing is
 * served without `token` or `guard`: every request gets 401.
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [
 *     DistributedQueueModule.forRoot({ ... }),
 *     DistributedQueueDashboardModule.forRoot({ path: '/queues', token: process.env.QUEUES_TOKEN }),
 *   ],
 * })
 * export class AppModule {}
 * // then open http://host/queues/login?token=...
 * ```
 */
@Module({})
export class DistributedQueueDashboardModule {
  /** @throws InvalidOptionsError naming a bad option */
  static forRoot(options: DashboardOptions = {}): DynamicModule {
    const resolved = resolveDashboardOptions(options);
    return {
      module: DistributedQueueDashboardModule,
      controllers: [dashboardController(resolved.path)],
      providers: [
        { provide: DASHBOARD_OPTIONS, useValue: resolved }, DashboardApiService, DashboardLimitsService, DashboardGroupsService, DashboardFlowsService, DashboardAuthGuard, DashboardClosing,
        { provide: DashboardSessions, useFactory: (moduleRef: ModuleRef) => new DashboardSessions(moduleRef, resolved.sessionTtlMs, resolved.token), inject: [ModuleRef] },
      ],
    };
  }
}
