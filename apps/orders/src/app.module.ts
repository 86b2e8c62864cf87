import { DynamicModule, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { DistributedQueueDashboardModule, DistributedQueueModule } from 'nestjs-distributed-queue';
import { APP_CONFIG, AppConfig, AppConfigModule, AppOptions, dashboardTokenOf } from './app.config';
import { HealthModule } from './health/health.module';
import { LedgerModule } from './ledger/ledger.module';
import { MetricsController } from './metrics/metrics.controller';
import { OrdersModule } from './orders/orders.module';

/**
 * The orders sample: `AppModule.register({ redisUrl })`. The queue module is configured with
 * `forRootAsync`, its options built from the injected app config: the delay queue (orders) and the route
 * queue (`route`, ordered tasks: the ledger), with Prometheus metrics on `GET /metrics` and a terminus health
 * check on `GET /health`, and the queues dashboard at `/queues` (sign in at `/queues/login?token=...`).
 * With `service`, the scheduler runs the order-closing tasks and calls the app back; the ledger is left out.
 */
@Module({})
export class AppModule implements OnApplicationShutdown {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  static register(options: AppOptions): DynamicModule {
    const dashboardToken = dashboardTokenOf(options);
    const config = AppConfigModule.register({ ...options, dashboardToken });
    return {
      module: AppModule,
      imports: [
        config,
        DistributedQueueModule.forRootAsync({
          imports: [config],
          inject: [APP_CONFIG],
          useFactory: ({ redisUrl, keyPrefix, route, service }: AppConfig) =>
            service
              ? { connection: redisUrl, keyPrefix, metrics: true, mode: 'service', service: { appName: 'orders-sample', ...service } }
              : { connection: redisUrl, keyPrefix, route: { ...route }, metrics: true },
        }),
        OrdersModule,
        // NOTE: ordered tasks run in plugin mode only.
        ...(options.service ? [] : [LedgerModule]),
        HealthModule,
        DistributedQueueDashboardModule.forRoot({ path: '/queues', token: dashboardToken, title: 'Orders sample: queues' }),
      ],
      controllers: [MetricsController],
    };
  }

  /**
   * Nest runs the root module's hooks last (imported and global modules first), so the queue's, the
   * orders' and the ledger's Redis connections are closed by the time this runs.
   */
  async onApplicationShutdown(signal?: string): Promise<void> {
    await this.config.onShutdown?.();
    new Logger('OrdersApp').log(`Shut down${signal ? ` on ${signal}` : ''}`);
  }
}
