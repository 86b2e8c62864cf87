import { Module, type INestApplication, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedQueueModule, type DistributedQueueModuleOptions } from 'nestjs-distributed-queue';
import * as path from 'path';
import { spawnChild, REPO_ROOT, type ChildHandle } from './child';
import { getFreePort } from './redis-server';
import type { RedisTarget } from './targets';

/** The secret the test scheduler and clients share. */
export const SERVICE_SECRET = 'test-service-secret-0123456789';
/** The test scheduler's API token. */
export const API_TOKEN = 'test-api-token-0123456789abcdef';

/** A child process with the HTTP port it listens on. */
export interface HttpChild extends ChildHandle {
  port: number;
  url: string;
}

/** A run reported by a service client instance. */
export interface RunReport {
  type: 'start' | 'done';
  instance: string;
  taskType: string;
  id: string;
  attempt: number;
  dueAt: number;
  /** Real epoch ms (not the instance's possibly skewed clock). */
  at: number;
}

const skewEnv = (skewMs?: number): Record<string, string> =>
  skewMs ? { DQ_CLOCK_SKEW_MS: String(skewMs), NODE_OPTIONS: `--require ${path.join(REPO_ROOT, 'test/fixtures/skew-clock.js')}` } : {};

/**
 * How long a child may take to listen. Compiling the library (a cold cache of ts-cache-register.js) takes
 * about 3 s of CPU; on a loaded machine (load 20 on 2 cores) that was 16 s and more of wall time.
 */
const START_TIMEOUT_MS = 90_000;

async function started(child: ChildHandle, port: number): Promise<HttpChild> {
  await child.waitForMessage((m) => m.type === 'ready', START_TIMEOUT_MS).catch((error: Error) => {
    throw new Error(`${error.message}\n${child.output()}`);
  });
  return Object.assign(child, { port, url: `http://127.0.0.1:${port}` });
}

/** Starts `apps/scheduler` in a child process on `prefix`; resolves once it listens. */
export async function startScheduler(target: RedisTarget, prefix: string, opts: { skewMs?: number; env?: Record<string, string> } = {}): Promise<HttpChild> {
  const port = await getFreePort();
  const child = spawnChild('apps/scheduler/src/main.ts', {
    DQ_CONNECTION: JSON.stringify(target.connection),
    DQ_PREFIX: prefix,
    DQ_SERVICE_SECRET: SERVICE_SECRET,
    SCHEDULER_API_TOKENS: API_TOKEN,
    PORT: String(port),
    SCHEDULER_SYNC_MS: '200',
    ...skewEnv(opts.skewMs),
    ...opts.env,
  });
  return started(child, port);
}

/** Options of a service client instance (test/fixtures/service-client-app.ts). */
export interface ClientOptions {
  app: string;
  instance: string;
  types: string[];
  workerOptions?: object;
  skewMs?: number;
  env?: Record<string, string>;
}

/**
 * Starts an instance of a client application in service mode; resolves once it listens. With `schedulerUrl`
 * it gets no Redis connection at all (service.url).
 */
export async function startClient(target: RedisTarget, prefix: string, opts: ClientOptions & { schedulerUrl?: string }): Promise<HttpChild> {
  const port = await getFreePort();
  const child = spawnChild('test/fixtures/service-client-app.ts', {
    ...(opts.schedulerUrl ? { DQ_SCHEDULER_URL: opts.schedulerUrl } : { DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix }),
    DQ_APP: opts.app,
    DQ_SECRET: SERVICE_SECRET,
    DQ_PORT: String(port),
    DQ_INSTANCE: opts.instance,
    DQ_TYPES: opts.types.join(','),
    DQ_WORKER_OPTIONS: JSON.stringify(opts.workerOptions ?? {}),
    ...skewEnv(opts.skewMs),
    ...opts.env,
  });
  return started(child, port);
}

/** The runs a client instance reported. */
export const runs = (child: ChildHandle, kind: RunReport['type'] = 'start'): RunReport[] =>
  child.messages.filter((m: RunReport) => m.type === kind && typeof m.instance === 'string');

/** Calls the scheduler's HTTP API with the test token. */
export async function api(scheduler: HttpChild, method: string, route: string, body?: unknown, token = API_TOKEN): Promise<{ status: number; body: any }> {
  // NOTE: bounded: a scheduler that accepted the connection and never answers fails the call, not the test's timeout
  const response = await fetch(`${scheduler.url}${route}`, {
    signal: AbortSignal.timeout(10_000),
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** A task's state as the scheduler's API reads it (`GET /api/tasks/:type/:id`). */
export async function taskState(scheduler: HttpChild, type: string, id: string): Promise<string> {
  return (await api(scheduler, 'GET', `/api/tasks/${type}/${id}`)).body.state;
}

let refs = 0;

/** Runs an IPC command in a client instance (see the fixture); resolves with its result, rejects with its error. */
export async function command(child: ChildHandle, cmd: string, args: Record<string, unknown> = {}): Promise<any> {
  const ref = ++refs;
  child.send({ cmd, ref, ...args });
  const reply = await child.waitForMessage((m) => m.type === 'reply' && m.ref === ref, 10_000);
  if (reply.error) throw Object.assign(new Error(reply.error.message), { name: reply.error.name });
  return reply.result;
}

/** An HTTP Nest application in this process with the queue module (service mode needs one), listening on `port`. */
export async function startHttpQueueApp(options: DistributedQueueModuleOptions, providers: Type<unknown>[], port: number): Promise<INestApplication> {
  @Module({ imports: [DistributedQueueModule.forRoot(options)], providers })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
  await app.listen(port, '127.0.0.1');
  return app;
}
