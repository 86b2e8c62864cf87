/**
 * Takes the pictures of docs/dashboard.md: starts a redis-server on a free port, an application with a
 * few delay types (delayed, ready, dead and done tasks, one type paused) and a route queue on two machines,
 * signs a headless Chromium in and writes docs/dashboard.png (overview), docs/dashboard-task.png (a type's
 * dead letters with a task's detail) and docs/dashboard-route.png (the partition map).
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register scripts/dashboard-screenshot.ts
 */
import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'net';
import * as path from 'path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DistributedQueueDashboardModule, DistributedQueueModule, QueueControlService, TaskSubmitService, type Task } from 'nestjs-distributed-queue';
import { startQueueApp, workerClass, type QueueApp } from '../test/support/queue-app';
import { startRedisServer, type RedisServerHandle } from '../test/support/redis-server';
import { routeTestOptions } from '../test/support/route';
import { sleep, waitFor } from '../test/support/wait';

const TOKEN = 'screenshot-token-0123456789';
const PREFIX = 'demo';
const docs = path.join(__dirname, '..', 'docs');

const workers = [
  workerClass('emails', { maxAttempts: 1 }, (task: Task<{ to: string; template: string }>) => {
    if (task.payload.to.endsWith('.invalid')) throw new Error(`mailbox ${task.payload.to} does not exist`);
  }),
  workerClass('reports', {}, () => undefined),
  workerClass('ledger', { ordered: true }, () => sleep(250)),
];

async function startApp(redisUrl: string): Promise<INestApplication> {
  @Module({
    imports: [
      DistributedQueueModule.forRoot({ connection: redisUrl, keyPrefix: PREFIX, route: routeTestOptions('orders', 'machine-a', 8) }),
      DistributedQueueDashboardModule.forRoot({ path: '/queues', token: TOKEN }),
    ],
    providers: workers,
  })
  class ScreenshotAppModule {}
  const app = await NestFactory.create(ScreenshotAppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  return app;
}

/** Delayed and dead tasks; a paused type with ready tasks. */
async function fill(submit: TaskSubmitService, control: QueueControlService): Promise<void> {
  const minutes = (n: number) => n * 60_000;
  await submit.submitMany('emails', Array.from({ length: 24 }, (_, i) => ({
    id: `welcome-${1000 + i}`, payload: { to: `user${i}@example.com`, template: 'welcome' }, delay: minutes(5 + i * 3),
  })));
  await submit.submitMany('emails', ['old-mailbox', 'typo', 'gone'].map((name, i) => ({
    id: `receipt-${2000 + i}`, payload: { to: `${name}@example.invalid`, template: 'receipt', order: 51_200 + i },
  })));
  await control.pause('reports');
  await submit.submitMany('reports', Array.from({ length: 6 }, (_, i) => ({ id: `daily-${i + 1}`, payload: { day: i + 1 } })));
}

/** Work while the page is open (completions are counted while the dashboard follows the event streams). */
async function flow(submit: TaskSubmitService): Promise<void> {
  await submit.submitMany('emails', Array.from({ length: 40 }, (_, i) => ({ payload: { to: `user${i}@example.com`, template: 'receipt' } })));
  await submit.submitOrderedMany('ledger', Array.from({ length: 400 }, (_, i) => ({ key: `account-${i % 23}`, payload: { entry: i, amount: (i * 37) % 500 } })));
}

async function shoot(page: Page, hash: string, ready: string, file: string): Promise<void> {
  await page.goto(`${page.url().split('#')[0]}#${hash}`);
  await page.locator(ready).first().waitFor({ timeout: 10_000 });
  await sleep(300);
  await page.screenshot({ path: path.join(docs, file), fullPage: true });
  console.log(`docs/${file}`);
}

async function main(): Promise<void> {
  let redis: RedisServerHandle | undefined;
  let app: INestApplication | undefined;
  let second: QueueApp | undefined;
  let browser: Browser | undefined;
  try {
    redis = await startRedisServer();
    app = await startApp(redis.url);
    second = await startQueueApp({ connection: redis.url, keyPrefix: PREFIX, route: routeTestOptions('orders', 'machine-b', 8) }, workers.slice(2));
    await fill(app.get(TaskSubmitService), app.get(QueueControlService));
    const inspect = second.inspect;
    await waitFor(async () => (await inspect.getCounts('emails')).dead === 3, { timeoutMs: 10_000, message: 'three dead emails' });
    await waitFor(async () => new Set((await inspect.getRouteStatus()).partitions.map((p) => p.owner)).size === 2, {
      timeoutMs: 15_000, message: 'both machines own partitions',
    });

    const base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/queues`;
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      timeout: 20_000,
    });
    const page = await browser.newPage({ viewport: { width: 1280, height: 640 } });
    await page.goto(`${base}/login?token=${TOKEN}`, { timeout: 10_000 });
    await page.locator('[data-testid="overview-table"]').waitFor({ timeout: 10_000 });
    await flow(app.get(TaskSubmitService));
    await waitFor(async () => (await inspect.getCounts('emails')).done === 40, { timeoutMs: 10_000, message: 'forty emails sent' });
    await sleep(2500); // the page's next refresh
    await shoot(page, '/', '[data-testid="overview-table"]', 'dashboard.png');
    await shoot(page, '/types/emails?state=dead&task=receipt-2000', '[data-testid="task-payload"]', 'dashboard-task.png');
    await shoot(page, '/route', '[data-testid="partition-row"]', 'dashboard-route.png');
  } finally {
    await browser?.close();
    await second?.close();
    await app?.close();
    await redis?.remove();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
