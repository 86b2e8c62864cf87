import 'reflect-metadata';
import { INestApplicationContext, Injectable, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cluster, Redis } from 'ioredis';
import {
  DistributedQueueModule, QueueControlService, TaskInspectorService, TaskSubmitService, TaskWorker,
  type DistributedQueueModuleOptions, type ActiveTask, type TaskHandler, type TaskWorkerOptions,
} from 'nestjs-distributed-queue';
import { delayQueueKeys } from 'nestjs-distributed-queue/redis/queue-keys';
import { killAllChildren } from './child';
import type { RedisTarget } from './targets';

export interface QueueApp {
  app: INestApplicationContext;
  submit: TaskSubmitService;
  inspect: TaskInspectorService;
  control: QueueControlService;
  close(): Promise<void>;
}

/** Starts a Nest application context with the module and the given worker classes. */
export async function startQueueApp(
  options: DistributedQueueModuleOptions,
  workers: Type<unknown>[] = [],
): Promise<QueueApp> {
  @Module({ imports: [DistributedQueueModule.forRoot(options)], providers: workers })
  class TestAppModule {}
  const app = await NestFactory.createApplicationContext(TestAppModule, { logger: ['error'], abortOnError: false });
  try {
    await app.init();
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
  let closed = false;
  return {
    app,
    submit: app.get(TaskSubmitService),
    inspect: app.get(TaskInspectorService),
    control: app.get(QueueControlService),
    close: async () => {
      if (closed) return;
      closed = true;
      await app.close();
    },
  };
}

/** A plain ioredis client on the target, for inspecting keys. */
export function connect(target: RedisTarget): Redis | Cluster {
  const { connection } = target;
  return typeof connection === 'string' ? new Redis(connection) : new Cluster(connection.cluster);
}

/** Keys of a type under a prefix (the library's own naming). */
export const keysOf = delayQueueKeys;

/** Every key of a delay type (its hash tag), on every master. */
export async function keysOfType(client: Redis | Cluster, keyPrefix: string, type: string): Promise<string[]> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  const found: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${keyPrefix}:{${keyPrefix}:${type}}*`, 'COUNT', 1000);
      found.push(...keys);
      cursor = next;
    } while (cursor !== '0');
  }
  return found.sort();
}

/** Milliseconds of the Redis clock. */
export async function redisNow(client: Redis | Cluster): Promise<number> {
  const [s, us] = await (client as Redis).time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/**
 * Makes a `@TaskWorker` class whose handler is `fn`. Its `handle` declares the signal only when `fn` does:
 * a handler of one parameter runs without an abort controller, as an application's would.
 */
export function workerClass<P = any>(
  type: string,
  options: TaskWorkerOptions,
  fn: (task: ActiveTask<P>, signal: AbortSignal) => unknown,
): Type<TaskHandler<P>> {
  if (fn.length < 2) {
    @TaskWorker(type, options)
    @Injectable()
    class TaskOnlyWorker {
      handle(task: ActiveTask<P>): unknown {
        return (fn as (task: ActiveTask<P>) => unknown)(task);
      }
    }
    return TaskOnlyWorker as Type<TaskHandler<P>>;
  }
  @TaskWorker(type, options)
  @Injectable()
  class TestWorker implements TaskHandler<P> {
    handle(task: ActiveTask<P>, signal: AbortSignal): unknown {
      return fn(task, signal);
    }
  }
  return TestWorker;
}

/** Resolves when `signal` aborts; the handler of a task that never finishes on its own. */
export function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** p50 / p99 / max of a list of numbers. */
export function percentiles(values: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] };
}

/** Jest hooks: the returned `start` opens apps that are closed after each test. */
export function useStartedApps(): typeof startQueueApp {
  const apps: QueueApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });
  return async (...args) => {
    const app = await startQueueApp(...args);
    apps.push(app);
    return app;
  };
}

/**
 * Jest hooks for a suite on one target: `start` opens apps that are closed after each test, `redis()` is
 * an inspection client for the suite.
 */
export function useQueueApps(target: RedisTarget): {
  start: typeof startQueueApp;
  redis: () => Redis | Cluster;
} {
  let client: Redis | Cluster | undefined;
  beforeAll(() => {
    client = connect(target);
  });
  afterAll(() => client?.disconnect());
  return {
    start: useStartedApps(),
    redis: () => {
      if (!client) throw new Error('useQueueApps: redis() is available inside tests only');
      return client;
    },
  };
}

/**
 * Jest hooks for suites that start applications here and child processes: after each test the apps pushed
 * onto the returned list are closed and every child process is killed.
 */
export function useAppsAndChildren(): QueueApp[] {
  const apps: QueueApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
    await killAllChildren();
  });
  return apps;
}
