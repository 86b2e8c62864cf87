/**
 * The fleet-wide limits on the dashboard's page, as an operator uses it (issue 28, item 6): a Nest HTTP
 * application with delay workers (one configured with limits), an ordered one and the dashboard, driven by a
 * headless Chromium (test/support/browser.ts). Single Redis; one browser context per test.
 *
 * Failure matrix (what each cell covers):
 * | cell                                 | checked                                                                      |
 * | the overview's limits table          | each delay type's rate limit (from the options; "none"), running / concurrency, no override badge; the ordered type has no row |
 * | set from the type view               | a rate limit (max, perMs, burst) and a concurrency typed in the forms reach Redis (getLimits), shown with an "override" badge |
 * | no limit, reset                      | "No limit" writes a null override ("none", badge); "Reset to options" drops both overrides: the options' values again, no badge |
 * | bad input typed in a form            | burst over max, an empty max: the error banner names the field (InvalidArgumentError), nothing written |
 * | a handler's RateLimitedError         | "limited" with the time left in the type's row                               |
 * | the recent rate                      | above 0/s while tasks finish                                                 |
 * | waiting tasks per priority           | the levels of `counts.priorities` in order (the overview's answer given the field by the test: the engine's priorities are not in this file's scope) |
 */
import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'net';
import { DistributedQueueDashboardModule, DistributedQueueModule, QueueControlService, RateLimitedError, TaskSubmitService, type Task } from 'nestjs-distributed-queue';
import { signedInPage, textUntil, useBrowser } from './support/browser';
import { workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const TOKEN = 'test-token-for-the-limits-page';
const target = getTargets().find((t) => t.name === 'single');
const OPTIONS = { max: 50, perMs: 1000, burst: 1 };

const workers = [
  workerClass('lb.limited', { rateLimit: { max: 50, perMs: 1000 }, globalConcurrency: 3, pollIntervalMs: 100 }, () => undefined),
  workerClass('lb.plain', { concurrency: 4, pollIntervalMs: 100 }, () => undefined),
  workerClass('lb.hit', { pollIntervalMs: 100 }, (task: Task) => {
    if (task.id === 'hit') throw new RateLimitedError(600_000);
  }),
  workerClass('lb.ordered', { ordered: true }, () => undefined),
];

(target ? describe : describe.skip)('limits on the dashboard page (single Redis)', () => {
  let app: INestApplication;
  let base: string;
  let control: QueueControlService;
  let submit: TaskSubmitService;

  beforeAll(async () => {
    const prefix = uniquePrefix('dash-limits');
    @Module({
      imports: [
        DistributedQueueModule.forRoot({ connection: target!.connection, keyPrefix: prefix, route: routeTestOptions(prefix, 'machine-1', 2) }),
        DistributedQueueDashboardModule.forRoot({ path: '/queues', token: TOKEN }),
      ],
      providers: workers,
    })
    class LimitsPageModule {}
    app = await NestFactory.create(LimitsPageModule, { logger: ['error'], abortOnError: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/queues`;
    control = app.get(QueueControlService);
    submit = app.get(TaskSubmitService);
    await waitFor(async () => (await control.getLimits('lb.limited')).globalConcurrency.configured === 3, { timeoutMs: 10_000, message: 'the options written' });
  }, 40_000);

  afterAll(async () => {
    await app?.close();
  });

  const pages = useBrowser();
  const signedIn = (hash = '') => signedInPage(pages, base, TOKEN, hash);

  const cell = (type: string, name: string) => `[data-testid="limits-row"][data-type="${type}"] [data-testid="limit-${name}"]`;
  const panel = (name: string) => `[data-testid="limits-panel"] [data-testid="limit-${name}"]`;

  it('the overview shows each delay type\'s limits; the ordered type has none', async () => {
    const page = await signedIn();
    await page.locator('[data-testid="limits-table"]').waitFor();
    const rows = await page.locator('[data-testid="limits-row"]').evaluateAll((list) => list.map((r) => r.getAttribute('data-type')));
    expect([...rows].sort()).toEqual(['lb.hit', 'lb.limited', 'lb.plain']);
    expect(await textUntil(page, cell('lb.limited', 'rate'), (t) => t !== '', 'rate limit')).toBe('50/s, burst 1');
    expect(await textUntil(page, cell('lb.limited', 'concurrency'), (t) => t !== '', 'concurrency')).toBe('0 / 3');
    expect(await textUntil(page, cell('lb.plain', 'rate'), (t) => t !== '', 'no rate limit')).toBe('none');
    expect(await textUntil(page, cell('lb.plain', 'concurrency'), (t) => t !== '', 'no concurrency')).toBe('0 / none');
    expect(await textUntil(page, cell('lb.plain', 'until'), (t) => t !== '', 'not limited')).toBe('—');
    expect(await page.locator('[data-testid="limits-table"] [data-testid="rate-override"]').count()).toBe(0);
  });

  it('sets the rate limit and the concurrency from the type view, lifts them, and resets to the options', async () => {
    const page = await signedIn('/types/lb.limited');
    await page.locator('[data-testid="limits-panel"]').waitFor();
    await page.fill('[data-testid="rate-max"]', '10');
    await page.fill('[data-testid="rate-per-ms"]', '2000');
    await page.fill('[data-testid="rate-burst"]', '0');
    await page.click('[data-testid="rate-limit-set"]');
    await textUntil(page, '[data-testid="limits-panel"] [data-testid="notice"]', (t) => t.includes('Rate limit: 10 per 2.0 s, burst 0'), 'the change reported');
    expect((await control.getLimits('lb.limited')).rateLimit).toEqual({ configured: OPTIONS, override: { max: 10, perMs: 2000, burst: 0 }, effective: { max: 10, perMs: 2000, burst: 0 } });
    await textUntil(page, panel('rate'), (t) => t === '10 per 2.0 s, burst 0 override', 'the override shown');

    await page.fill('[data-testid="concurrency-n"]', '5');
    await page.click('[data-testid="concurrency-set"]');
    await textUntil(page, panel('concurrency'), (t) => t === '0 / 5 override', 'the concurrency shown');
    expect((await control.getLimits('lb.limited')).globalConcurrency).toEqual({ configured: 3, override: 5, effective: 5 });

    await page.click('[data-testid="rate-limit-none"]');
    await textUntil(page, panel('rate'), (t) => t === 'none override', 'no rate limit, by the operator');
    expect((await control.getLimits('lb.limited')).rateLimit).toEqual({ configured: OPTIONS, override: null, effective: null });

    await page.click('[data-testid="limits-reset"]');
    await textUntil(page, panel('rate'), (t) => t === '50/s, burst 1', 'the options\' rate limit again');
    await textUntil(page, panel('concurrency'), (t) => t === '0 / 3', 'the options\' concurrency again');
    expect(await control.getLimits('lb.limited')).toMatchObject({ rateLimit: { override: undefined, effective: OPTIONS }, globalConcurrency: { override: undefined, effective: 3 } });
  });

  it('shows a bad value typed in a form as a typed error, and writes nothing', async () => {
    const before = await control.getLimits('lb.limited');
    const page = await signedIn('/types/lb.limited');
    await page.locator('[data-testid="limits-panel"]').waitFor();
    await page.fill('[data-testid="rate-max"]', '10');
    await page.fill('[data-testid="rate-burst"]', '20');
    await page.click('[data-testid="rate-limit-set"]');
    await textUntil(page, '[data-testid="limits-panel"] [data-testid="error-banner"]', (t) => t.includes('InvalidArgumentError') && t.includes('rateLimit.burst'), 'burst refused');
    await page.fill('[data-testid="rate-max"]', '');
    await page.fill('[data-testid="rate-burst"]', '');
    await page.click('[data-testid="rate-limit-set"]');
    await textUntil(page, '[data-testid="limits-panel"] [data-testid="error-banner"]', (t) => t.includes('rateLimit.max'), 'an empty max refused');
    expect(await control.getLimits('lb.limited')).toEqual(before);
  });

  it('shows a type held back by a handler\'s RateLimitedError, and the recent rate', async () => {
    const page = await signedIn();
    await submit.submit('lb.hit', {}, { id: 'hit' });
    await textUntil(page, cell('lb.hit', 'until'), (t) => t === 'limited in 10 min', 'limited until shown');
    await submit.submitMany('lb.plain', Array.from({ length: 30 }, (_, i) => ({ payload: i })));
    await textUntil(page, cell('lb.plain', 'recent-rate'), (t) => /^\d/.test(t) && t !== '0/s', 'a recent rate');
  });

  it('shows waiting tasks per priority level, in order', async () => {
    const page = await signedIn();
    await page.route('**/queues/api/overview', async (route) => {
      const response = await route.fetch();
      const overview = (await response.json()) as { types: { type: string; counts: Record<string, unknown> }[] };
      for (const t of overview.types) if (t.type === 'lb.plain') t.counts.priorities = { '10': 1, '0': 4, '2': 3 };
      await route.fulfill({ response, json: overview });
    });
    await textUntil(page, cell('lb.plain', 'priorities'), (t) => t === '0: 4 · 2: 3 · 10: 1', 'priorities shown');
    expect(await textUntil(page, cell('lb.limited', 'priorities'), (t) => t !== '', 'none')).toBe('—');
  });
});
