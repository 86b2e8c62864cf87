import { DynamicModule, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { DistributedQueueModule } from '../../../libs/distributed-queue/src';
import { APP_CONFIG, AppConfig, AppConfigModule, AppOptions } from './app.config';
import { OrdersModule } from './orders/orders.module';

/**
 * The orders sample: `AppModule.register({ redisUrl })`. The queue module is configured with
 * `forRootAsync`, its options built from the injected app config.
 */
@Module({})
export class AppModule implements OnApplicationShutdown {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  static register(options: AppOptions): DynamicModule {
    const config = AppConfigModule.register(options);
    return {
      module: AppModule,
      imports: [
        config,
        DistributedQueueModule.forRootAsync({
          imports: [config],
          inject: [APP_CONFIG],
          useFactory: ({ redisUrl, keyPrefix }: AppConfig) => ({ connection: redisUrl, keyPrefix }),
        }),
        OrdersModule,
      ],
    };
  }

  /**
   * Nest runs the root module's hooks last (imported and global modules first), so the queue's and the
   * orders' Redis connections are closed by the time this runs.
   */
  async onApplicationShutdown(signal?: string): Promise<void> {
    await this.config.onShutdown?.();
    new Logger('OrdersApp').log(`Shut down${signal ? ` on ${signal}` : ''}`);
  }
}
