import { DynamicModule, Module } from '@nestjs/common';
import { randomBytes } from 'crypto';
import { hostname } from 'os';
import type { RouteQueueOptions } from 'nestjs-distributed-queue';

/** The route (ordered) queue settings the sample exposes; passed to the queue module's `route` option. */
export type AppRouteOptions = Required<
  Pick<RouteQueueOptions, 'qId' | 'partitions' | 'machineId' | 'heartbeatMs' | 'offlineMs' | 'idleMs' | 'rebalanceMs'>
>;

/** Options of `AppModule.register`. */
export interface AppOptions {
  /** Redis for the queue, the order records and the ledger accounts, e.g. `redis://127.0.0.1:6379`. */
  redisUrl: string;
  /** First part of every key (queue, orders, accounts). @default 'orders-sample' */
  keyPrefix?: string;
  /** Default time before an unpaid order is closed. @default 30000 */
  closeAfterMs?: number;
  /**
   * The route queue of the ledger example; every field is optional, see `DEFAULT_ROUTE`. Every copy of the
   * app sharing one Redis must have the same qId and partitions and a machineId of its own.
   */
  route?: Partial<AppRouteOptions>;
  /**
   * The token of the queues dashboard at `/queues` (at least 16 characters). @default env DASHBOARD_TOKEN,
   * else a random one (main.ts prints the sign-in link)
   */
  dashboardToken?: string;
  /**
   * Service mode: the scheduler (`apps/scheduler`, same Redis and key prefix) runs the order-closing tasks
   * and calls this app back at `publicUrl`; the ledger (ordered tasks) is plugin mode only, so it is left
   * out. @default plugin mode
   */
  service?: { secret: string; publicUrl: string };
  /** Called once the app has shut down (after every other shutdown hook), e.g. to stop a local Redis. */
  onShutdown?: () => Promise<void>;
}

export type AppConfig = Required<Omit<AppOptions, 'onShutdown' | 'route' | 'service'>> & {
  route: AppRouteOptions;
} & Pick<AppOptions, 'onShutdown' | 'service'>;

/**
 * The sample's route queue defaults. machineId: env MACHINE_ID, else `<hostname>:<pid>` (main.ts passes
 * `<hostname>:<PORT>` instead, so that a copy restarted on the same port resumes its partitions).
 */
export function defaultRoute(): AppRouteOptions {
  return {
    qId: 'orders-sample',
    partitions: 8,
    machineId: process.env.MACHINE_ID?.trim() || `${hostname()}:${process.pid}`,
    heartbeatMs: 1000,
    offlineMs: 5000,
    idleMs: 5000,
    rebalanceMs: 1000,
  };
}

export const APP_CONFIG = Symbol('APP_CONFIG');

/** The dashboard token: the option, else env DASHBOARD_TOKEN, else a random one. */
export function dashboardTokenOf(options: Pick<AppOptions, 'dashboardToken'>): string {
  return options.dashboardToken ?? (process.env.DASHBOARD_TOKEN?.trim() || randomBytes(16).toString('hex'));
}

/** Makes the resolved `AppConfig` injectable everywhere (`@Inject(APP_CONFIG)`). */
@Module({})
export class AppConfigModule {
  static register(options: AppOptions): DynamicModule {
    const { route, ...rest } = options;
    const config: AppConfig = {
      keyPrefix: 'orders-sample',
      closeAfterMs: 30_000,
      dashboardToken: dashboardTokenOf(options),
      ...rest,
      route: { ...defaultRoute(), ...dropUndefined(route ?? {}) },
    };
    return { module: AppConfigModule, global: true, providers: [{ provide: APP_CONFIG, useValue: config }], exports: [APP_CONFIG] };
  }
}

function dropUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
