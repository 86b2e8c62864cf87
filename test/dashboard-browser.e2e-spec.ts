/**
 * The dashboard as an operator uses it: a Nest HTTP application with DistributedQueueModule, a few workers
 * and DistributedQueueDashboardModule, driven by a headless Chromium (playwright-core, the system's
 * /usr/bin/chromium; .ci/run installs it). One application for the file, one browser context per test.
 *
 * Failure matrix (what each cell covers):
 * | cell                          | checked                                                                         |
 * | overview                      | every type listed after signing in, the route linked, no error                 |
 * | schedules                     | a schedule's rule (time zone) and next tick; never ran                         |
 * | live counts                   | counts follow submits and completions without a reload                         |
 * | re-drive from the detail      | a dead task's error and payload; re-driven from its detail, it runs and is done |
 * | result and deadline           | a done task's result (JSON as text), a waiting task's deadline                 |
 * | progress and log lines, live  | a running task's progress (40: bar and value) and log lines (attempt, time, text; "1 earlier line dropped" with taskLogs.maxLines 2); 80 shown without a reload (read every second while running); closing the detail stops the reads; done: the lines stay, no progress, no more reads; markup in a line is text (no element, no script run) |
 * | lease and cancel              | a running task's lease and holder; cancel from the page aborts the handler     |
 * | pause and resume              | nothing runs while paused; resumed from the page, it runs                      |
 * | not signed in                 | 401 for the page, a wrong token and the API without the token; 200 with it    |
 * | hostile payload and error     | markup in a payload and an error message is text (no element, no script run)   |
 * | API error                     | the banner names the error and says its message                                |
 * | CSRF                          | a POST without the header or with a forged one: 403, nothing done               |
 * | route map                     | partitions, their owner, the live machine, the lock holder, heartbeat age      |
 * | paging                        | Next, Previous and First by cursor, positions shown                            |
 * | sign out                      | the session ends on the server: the cookie is refused afterwards, even copied  |
 */
import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'net';
import {
  DistributedQueueDashboardModule, DistributedQueueModule, QueueControlService, TaskInspectorService, TaskScheduleService, TaskSubmitService,
  type ActiveTask, type Task,
} from 'nestjs-distributed-queue';
import { signedInPage, textUntil, useBrowser } from './support/browser';
import { untilAborted, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

const TOKEN = 'test-token-for-the-dashboard';
const POLL_MS = 200;
const XSS = '<script>alert(1)</script>';
const XSS_ERROR = '<img src=x onerror="alert(2)">';
const target = getTargets().find((t) => t.name === 'single');

/** Ids each worker ran to completion, by type. */
const ran: Record<string, string[]> = { counted: [], flaky: [], pausable: [] };
const RESULT = { invoice: 'INV-7', note: '<b>as text</b>' };
const failedOnce = new Set<string>();
/** Ids of the `slow` tasks whose handler's signal aborted. */
const aborted: string[] = [];
const XSS_LINE = 'step 2: <img src=x onerror=alert(1)>';
/** A promise the test resolves with `open()`. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
/** Gates of the `reporting` handler: past `more` it reports 80, past `release` it returns. */
const reporting = { more: gate(), release: gate() };
const workers = [
  workerClass('counted', { pollIntervalMs: POLL_MS }, (task: Task) => void ran.counted.push(task.id)),
  workerClass('flaky', { pollIntervalMs: POLL_MS, maxAttempts: 1 }, (task: Task) => {
    if (!failedOnce.has(task.id)) {
      failedOnce.add(task.id);
      throw new Error('the first run fails');
    }
    ran.flaky.push(task.id);
  }),
  workerClass('pausable', { pollIntervalMs: POLL_MS }, (task: Task) => void ran.pausable.push(task.id)),
  workerClass('xss', { pollIntervalMs: POLL_MS, maxAttempts: 1 }, () => {
    throw new Error(XSS_ERROR);
  }),
  workerClass('slow', { pollIntervalMs: POLL_MS, maxAttempts: 1 }, (task: Task, signal: AbortSignal) =>
    untilAborted(signal).catch((reason) => {
      aborted.push(task.id);
      throw reason;
    })),
  workerClass('ledger', { ordered: true }, () => undefined),
  workerClass('returning', { pollIntervalMs: POLL_MS }, () => RESULT),
  workerClass('reporting', { pollIntervalMs: POLL_MS, maxAttempts: 1 }, async (task: ActiveTask) => {
    task.log('step 0: started'); // the oldest of 3 lines: dropped (taskLogs.maxLines 2)
    task.log('step 1: fetched 3 pages');
    task.log(XSS_LINE);
    task.progress(40);
    await reporting.more.promise;
    task.progress(80);
    await reporting.release.promise;
  }),
];

(target ? describe : describe.skip)('dashboard in a browser (single Redis)', () => {
  let app: INestApplication;
  let base: string;
  let submit: TaskSubmitService;
  let inspect: TaskInspectorService;
  let control: QueueControlService;

  beforeAll(async () => {
    @Module({
      imports: [
        DistributedQueueModule.forRoot({
          connection: target!.connection, keyPrefix: uniquePrefix('dashboard'), route: routeTestOptions('dq', 'machine-1', 4),
          taskLogs: { maxLines: 2 },
        }),
        DistributedQueueDashboardModule.forRoot({ path: '/queues', token: TOKEN }),
      ],
      providers: workers,
    })
    class DashboardTestModule {}
    app = await NestFactory.create(DashboardTestModule, { logger: ['error'], abortOnError: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/queues`;
    submit = app.get(TaskSubmitService);
    inspect = app.get(TaskInspectorService);
    control = app.get(QueueControlService);
  }, 40_000);

  afterAll(async () => {
    reporting.more.open();
    reporting.release.open();
    await app?.close();
  });

  const browser = useBrowser();
  const newPage = () => browser.newPage();
  /** Signs in through `<base>/login?token=...` and lands on the page, at `hash` when given. */
  const signedIn = (hash = '') => signedInPage(browser, base, TOKEN, hash);

  const cell = (type: string, state: string) => `[data-testid="type-row"][data-type="${type}"] [data-testid="count-${state}"]`;

  it('shows every type on the overview after signing in', async () => {
    const page = await signedIn();
    await page.locator('[data-testid="overview-table"]').waitFor();
    const types = await page.locator('[data-testid="type-row"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-type')));
    expect([...types].sort()).toEqual(['counted', 'flaky', 'ledger', 'pausable', 'reporting', 'returning', 'slow', 'xss']);
    expect(await page.title()).toBe('Queues');
    await page.locator('[data-testid="route-link"]').waitFor();
    expect(await page.locator('[data-testid="error-banner"]').count()).toBe(0);
  });

  it('lists the schedules with their rule and next tick', async () => {
    const schedules = app.get(TaskScheduleService);
    await schedules.upsert('nightly-report', { cron: '0 0 3 * * *', timeZone: 'Europe/Berlin', type: 'counted' });
    try {
      const page = await signedIn();
      const row = '[data-testid="schedule-row"][data-schedule="nightly-report"]';
      await page.locator(row).waitFor();
      expect(await page.locator(`${row} code`).textContent()).toBe('0 0 3 * * * (Europe/Berlin)');
      expect(await page.locator(`${row} [data-testid="schedule-next"]`).textContent()).toMatch(/^in /);
      expect(await page.locator(`${row} [data-testid="schedule-last"]`).textContent()).toBe('never');
    } finally {
      await schedules.remove('nightly-report');
    }
  });

  it('updates the counts as tasks are submitted, without a reload', async () => {
    const page = await signedIn();
    await textUntil(page, cell('counted', 'delayed'), (t) => t.trim() === '0', 'delayed 0 at first');
    await page.evaluate('window.notReloaded = true');
    await submit.submitMany('counted', [1, 2, 3].map((n) => ({ payload: n, delay: 60_000 })));
    await textUntil(page, cell('counted', 'delayed'), (t) => t.trim() === '3', 'delayed 3 shown');
    await submit.submitMany('counted', [4, 5].map((n) => ({ payload: n })));
    await waitFor(() => ran.counted.length === 2, { timeoutMs: 5000, message: 'two tasks ran' });
    await textUntil(page, cell('counted', 'done'), (t) => t.trim() === '2', 'done 2 shown');
    expect(await page.evaluate('window.notReloaded')).toBe(true);
  });

  it('re-drives a dead task from its detail: it runs again and succeeds', async () => {
    await submit.submit('flaky', { order: 7 }, { id: 'flaky-1' });
    await waitFor(async () => (await inspect.getState('flaky', 'flaky-1')) === 'dead', { timeoutMs: 5000, message: 'flaky-1 dead' });
    const page = await signedIn('/types/flaky?state=dead');
    await textUntil(page, '[data-testid="tab-count-dead"]', (t) => t.trim() === '1', 'dead count 1');
    await page.locator('[data-testid="task-row"][data-id="flaky-1"] [data-testid="task-link"]').click();
    await textUntil(page, '[data-testid="detail-error"]', (t) => t.includes('the first run fails'), 'last error shown');
    expect(JSON.parse((await page.locator('[data-testid="task-payload"]').textContent()) ?? '')).toEqual({ order: 7 });
    await page.locator('[data-testid="action-redrive"]').click();
    await waitFor(() => ran.flaky.includes('flaky-1'), { timeoutMs: 5000, message: 'flaky-1 ran after the re-drive' });
    await waitFor(async () => (await inspect.getState('flaky', 'flaky-1')) === 'done', { timeoutMs: 5000, message: 'flaky-1 done' });
    await textUntil(page, '[data-testid="notice"]', (t) => t.includes('Re-drove 1'), 'the action reported');
    await textUntil(page, '[data-testid="tab-count-dead"]', (t) => t.trim() === '0', 'dead count 0');
  });

  it("shows a done task's result, and a waiting task's deadline", async () => {
    await submit.submit('returning', {}, { id: 'r-1' });
    await waitFor(async () => (await inspect.getState('returning', 'r-1')) === 'done', { timeoutMs: 5000, message: 'r-1 done' });
    const page = await signedIn('/types/returning?state=done&task=r-1');
    await textUntil(page, '[data-testid="task-result"]', (t) => t.includes('INV-7'), 'result shown');
    expect(JSON.parse((await page.locator('[data-testid="task-result"]').textContent()) ?? '')).toEqual(RESULT);
    await submit.submit('returning', {}, { id: 'r-2', delay: 60_000, ttlMs: 120_000 });
    const waiting = await signedIn('/types/returning?state=delayed&task=r-2');
    await textUntil(waiting, '[data-testid="detail-deadline"]', (t) => t.includes('in'), 'deadline shown');
  });

  it("shows a running task's progress and log lines live; a done task's lines, no progress", async () => {
    await submit.submit('reporting', {}, { id: 'rep-1' });
    await waitFor(async () => (await inspect.getTask('reporting', 'rep-1')).progress === 40, { timeoutMs: 5000, message: 'rep-1 reported 40' });
    const page = await signedIn('/types/reporting?state=running&task=rep-1');
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    let reads = 0;
    page.on('request', (req) => {
      if (new URL(req.url()).pathname.endsWith('/api/types/reporting/tasks/rep-1')) reads += 1;
    });
    /** The reads of the task's detail during `ms`. */
    const readsDuring = async (ms: number) => {
      const before = reads;
      await sleep(ms);
      return reads - before;
    };
    await page.evaluate('window.notReloaded = true');
    await textUntil(page, '[data-testid="detail-progress"]', (t) => t === '40 %', 'progress 40 shown');
    expect(await page.locator('[data-testid="progress-bar"]').getAttribute('value')).toBe('40');
    const lines = () => page.locator('[data-testid="log-text"]').allTextContents();
    // NOTE: once in a full suite the first reading showed progress 40 and no lines (cause not found: Redis writes
    // both in one script call); the lines must show by the next readings
    await waitFor(async () => (await lines()).length === 2, { timeoutMs: 5000, message: 'the lines shown' });
    expect(await lines()).toEqual(['step 1: fetched 3 pages', XSS_LINE]);
    expect(await page.locator('[data-testid="log-line"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-attempt')))).toEqual(['1', '1']);
    expect(await page.locator('[data-testid="log-line"]').first().textContent()).toMatch(/^#1 \d\d:\d\d:\d\d\.\d{3} step 1/);
    expect(await page.locator('[data-testid="logs-dropped"]').textContent()).toBe('1 earlier line dropped');

    reporting.more.open();
    await textUntil(page, '[data-testid="detail-progress"]', (t) => t === '80 %', 'progress 80 shown without a reload');
    expect(await page.evaluate('window.notReloaded')).toBe(true);
    // read about every second while running; none once the detail is closed
    expect(await readsDuring(3000)).toBeGreaterThanOrEqual(2);
    await page.locator('[data-testid="detail-close"]').click();
    await page.locator('[data-testid="task-detail"]').waitFor({ state: 'detached' });
    expect(await readsDuring(2500)).toBe(0);
    await page.evaluate(`location.hash = '#/types/reporting?state=running&task=rep-1'`);
    await textUntil(page, '[data-testid="detail-progress"]', (t) => t === '80 %', 'progress 80 shown again');

    reporting.release.open();
    await waitFor(async () => (await inspect.getState('reporting', 'rep-1')) === 'done', { timeoutMs: 5000, message: 'rep-1 done' });
    await textUntil(page, '[data-testid="detail-state"]', (t) => t === 'done', 'done shown without a reload');
    expect(await page.locator('[data-testid="detail-progress"]').count()).toBe(0);
    expect(await lines()).toEqual(['step 1: fetched 3 pages', XSS_LINE]);
    // done: read no more
    expect(await readsDuring(2500)).toBe(0);
    expect(await page.evaluate('window.notReloaded')).toBe(true);
    expect(await page.locator('#app script, #app img').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('shows a running task\'s lease and its holder; cancel aborts its handler', async () => {
    await submit.submit('slow', {}, { id: 'long-1' });
    await waitFor(async () => (await inspect.getState('slow', 'long-1')) === 'running', { timeoutMs: 5000, message: 'long-1 running' });
    const page = await signedIn('/types/slow?state=running&task=long-1');
    await textUntil(page, '[data-testid="detail-state"]', (t) => t.trim() === 'running', 'state running');
    await textUntil(page, '[data-testid="detail-lease"]', (t) => /UTC \(in /.test(t), 'lease expiry ahead');
    await textUntil(page, '[data-testid="detail-lease-holder"]', (t) => t.endsWith(`/${process.pid}`), 'this process holds the lease');
    await page.locator('[data-testid="action-cancel"]').click();
    await textUntil(page, '[data-testid="notice"]', (t) => t.includes('cancel-requested'), 'the cancel reported');
    await waitFor(() => aborted.includes('long-1'), { timeoutMs: 5000, message: 'the handler aborted' });
  });

  it('pauses a type: nothing runs until it is resumed from the page', async () => {
    const page = await signedIn('/types/pausable');
    await page.locator('[data-testid="pause-button"]').click();
    await page.locator('[data-testid="paused-badge"]').waitFor();
    expect(await control.isPaused('pausable')).toBe(true);
    await submit.submit('pausable', {}, { id: 'held' });
    await sleep(3 * POLL_MS);
    expect(ran.pausable).toEqual([]);
    expect((await inspect.getCounts('pausable')).ready).toBe(1);
    await page.locator('[data-testid="resume-button"]').click();
    await waitFor(() => ran.pausable.includes('held'), { timeoutMs: 5000, message: 'held ran after the resume' });
    await page.locator('[data-testid="paused-badge"]').waitFor({ state: 'detached' });
    expect(await control.isPaused('pausable')).toBe(false);
  });

  it('answers 401 to a browser that has not signed in, and to the API without the token', async () => {
    const page = await newPage();
    expect((await page.goto(`${base}/`))?.status()).toBe(401);
    expect((await page.goto(`${base}/login?token=wrong-token-of-some-length`))?.status()).toBe(401);
    const api = await fetch(`${base}/api/overview`, { signal: AbortSignal.timeout(5000) });
    expect(api.status).toBe(401);
    expect(((await api.json()) as { error: unknown }).error).toMatchObject({ name: expect.any(String), message: expect.any(String) });
    const bearer = await fetch(`${base}/api/overview`, { headers: { authorization: `Bearer ${TOKEN}` }, signal: AbortSignal.timeout(5000) });
    expect(bearer.status).toBe(200);
  });

  it('renders a payload and an error message as text: no script runs', async () => {
    await submit.submit('xss', { html: XSS }, { id: 'x-1' });
    await waitFor(async () => (await inspect.getState('xss', 'x-1')) === 'dead', { timeoutMs: 5000, message: 'x-1 dead' });
    const page = await newPage();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.goto(`${base}/login?token=${TOKEN}`);
    await page.goto(`${base}/#/types/xss?state=dead&task=x-1`);
    await textUntil(page, '[data-testid="task-payload"]', (t) => t.includes(XSS), 'payload shown as text');
    await textUntil(page, '[data-testid="detail-error"]', (t) => t.includes(XSS_ERROR), 'error shown as text');
    await textUntil(page, '[data-testid="task-row"][data-id="x-1"]', (t) => t.includes(XSS_ERROR), 'error in the table');
    expect(await page.locator('#app script, #app img').count()).toBe(0);
    await sleep(300);
    expect(dialogs).toEqual([]);
  });

  it('shows an API error in the banner, with its name and message', async () => {
    const page = await signedIn('/types/no-such-type');
    await textUntil(page, '[data-testid="error-banner"]', (t) => t.includes('no-such-type'), 'the 404 shown');
    expect((await page.locator('[data-testid="error-name"]').first().textContent())?.trim()).toMatch(/\w+/);
  });

  it('refuses a POST without the CSRF header (403), even with the session cookie', async () => {
    const page = await signedIn();
    const post = (headers: string) =>
      page.evaluate(`fetch('${base}/api/types/counted/pause', { method: 'POST', headers: ${headers}, body: '{}' }).then((r) => r.status)`);
    expect(await post(`{ 'content-type': 'application/json' }`)).toBe(403);
    expect(await post(`{ 'content-type': 'application/json', 'x-csrf-token': 'forged' }`)).toBe(403);
    expect(await control.isPaused('counted')).toBe(false);
    const csrf = `decodeURIComponent(document.cookie.split('; ').find((c) => c.startsWith('dq_csrf=')).slice(8))`;
    expect([200, 201]).toContain(await post(`{ 'content-type': 'application/json', 'x-csrf-token': ${csrf} }`));
    expect(await control.isPaused('counted')).toBe(true);
    await control.resume('counted');
  });

  it('maps the route queue: partitions, their owner, the live machine and the lock holder', async () => {
    const page = await signedIn('/route');
    await waitFor(async () => (await page.locator('[data-testid="machine-cell"][data-machine="machine-1"].own').count()) === 4, {
      timeoutMs: 10_000, intervalMs: 100, message: 'machine-1 owns the 4 partitions',
    });
    expect(await page.locator('[data-testid="partition-row"]').count()).toBe(4);
    await textUntil(page, '[data-testid="lock-holder"]', (t) => t.trim() === 'machine-1', 'lock holder shown');
    await textUntil(page, '[data-testid="machine-row"][data-machine="machine-1"] [data-testid="heartbeat-age"]', (t) => /ago$/.test(t.trim()), 'heartbeat age');
  });

  it('pages a state by cursor: Next, Previous and First, positions shown while browsing', async () => {
    await submit.submitMany('slow', Array.from({ length: 120 }, (_, n) => ({ id: `later-${String(n).padStart(3, '0')}`, payload: n, delay: 600_000 + n })));
    const page = await signedIn('/types/slow?state=delayed');
    const info = '[data-testid="pager-info"]';
    const firstRow = async () => page.locator('[data-testid="task-row"]').first().getAttribute('data-id');
    await textUntil(page, info, (t) => t.trim() === '1–50 of 120', 'first page');
    expect(await page.locator('[data-testid="pager-prev"].disabled').count()).toBe(1);
    await page.locator('[data-testid="pager-next"]').click();
    await textUntil(page, info, (t) => t.trim() === '51–100 of 120', 'second page');
    expect(page.url()).toContain('cursor=');
    expect(await firstRow()).toBe('later-050');
    await page.locator('[data-testid="pager-next"]').click();
    await textUntil(page, info, (t) => t.trim() === '101–120 of 120', 'last page');
    expect(await page.locator('[data-testid="pager-next"].disabled').count()).toBe(1);
    await page.locator('[data-testid="pager-prev"]').click();
    await textUntil(page, info, (t) => t.trim() === '51–100 of 120', 'back to the second page');
    expect(await firstRow()).toBe('later-050');
    await page.locator('[data-testid="pager-first"]').click();
    await textUntil(page, info, (t) => t.trim() === '1–50 of 120', 'back to the first page');
    expect(await firstRow()).toBe('later-000');
  });

  it('signs out: the session ends on the server, its cookie is refused afterwards', async () => {
    const page = await signedIn();
    await page.locator('[data-testid="overview-table"]').waitFor();
    const session = (await browser.context().cookies()).find((c) => c.name === 'dq_dash')!.value;
    await page.locator('[data-testid="sign-out"]').click();
    await page.locator('[data-testid="signed-out"]').waitFor();
    expect((await browser.context().cookies()).find((c) => c.name === 'dq_dash')).toBeUndefined();
    expect(await page.evaluate(`fetch('${base}/api/overview').then((r) => r.status)`)).toBe(401);
    // the old cookie, copied before the sign-out, is refused too
    const copied = await fetch(`${base}/api/overview`, { headers: { cookie: `dq_dash=${session}` } });
    expect(copied.status).toBe(401);
  });
});
