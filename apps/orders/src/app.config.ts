import { DynamicModule, Module } from '@nestjs/common';

/** Options of `AppModule.register`. */
export interface AppOptions {
  /** Redis for both the queue and the order records, e.g. `redis://127.0.0.1:6379`. */
  redisUrl: string;
  /** First part of every key (queue and orders). @default 'orders-sample' */
  keyPrefix?: string;
  /** Default time before an unpaid order is closed. @default 30000 */
  closeAfterMs?: number;
  /** Called once the app has shut down (after every other shutdown hook), e.g. to stop a local Redis. */
  onShutdown?: () => Promise<void>;
}

export type AppConfig = Required<Omit<AppOptions, 'onShutdown'>> & Pick<AppOptions, 'onShutdown'>;

export const APP_CONFIG = Symbol('APP_CONFIG');

/** Makes the resolved `AppConfig` injectable everywhere (`@Inject(APP_CONFIG)`). */
@Module({})
export class AppConfigModule {
  static register(options: AppOptions): DynamicModule {
    const config: AppConfig = { keyPrefix: 'orders-sample', closeAfterMs: 30_000, ...options };
    return { module: AppConfigModule, global: true, providers: [{ provide: APP_CONFIG, useValue: config }], exports: [APP_CONFIG] };
  }
}
