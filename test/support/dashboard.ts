import { INestApplication, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  DistributedQueueDashboardModule, DistributedQueueModule, TaskSubmitService, type DashboardOptions, type DistributedQueueModuleOptions,
} from 'nestjs-distributed-queue';

/** The dashboard token the tests sign in with. */
export const TOKEN = 'a-dashboard-token-for-tests';

export type Call = (path: string, init?: RequestInit) => Promise<Response>;

/** An HTTP app with the queue module and the dashboard; `call` sends requests to it. */
export async function startDashboard(queue: DistributedQueueModuleOptions, dashboard: DashboardOptions, providers: Type<unknown>[]) {
  @Module({ imports: [DistributedQueueModule.forRoot(queue), DistributedQueueDashboardModule.forRoot(dashboard)], providers })
  class DashboardTestModule {}
  const app: INestApplication = await NestFactory.create(DashboardTestModule, { logger: ['error'] });
  await app.listen(0, '127.0.0.1');
  const base = `${await app.getUrl()}${dashboard.path ?? '/queues'}`.replace('[::1]', '127.0.0.1');
  const call: Call = (path, init = {}) => fetch(`${base}${path}`, { redirect: 'manual', ...init });
  return { app, base, call, submit: app.get(TaskSubmitService) };
}

/** Signs in with the token: the session and CSRF cookies, as a browser would send them back. */
export async function signIn(call: Call, token = TOKEN): Promise<{ cookie: string; csrf: string; session: string }> {
  const res = await call(`/login?token=${token}`);
  if (res.status !== 303) throw new Error(`sign-in answered ${res.status}`);
  const cookies = res.headers.getSetCookie().map((c) => c.split(';')[0]);
  const csrf = decodeURIComponent(cookies.find((c) => c.startsWith('dq_csrf='))!.slice('dq_csrf='.length));
  const session = cookies.find((c) => c.startsWith('dq_dash='))!.slice('dq_dash='.length);
  return { cookie: cookies.join('; '), csrf, session };
}

/**
 * For a describe block: `start` starts a dashboard app (as startDashboard) that is closed after each test;
 * `apps` holds the ones started, for tests that start others themselves.
 */
export function useDashboards(): { start: typeof startDashboard; apps: INestApplication[] } {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });
  const start: typeof startDashboard = async (...args) => {
    const started = await startDashboard(...args);
    apps.push(started.app);
    return started;
  };
  return { start, apps };
}
