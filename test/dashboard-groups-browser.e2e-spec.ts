/**
 * The groups of a delay-queue type on the dashboard's page, as an operator uses it (issue 29, item 3): a Nest
 * HTTP application with a delay type of 120 groups (no workers: the backlogs stay), an ordered type and the
 * dashboard, driven by a headless Chromium (test/support/browser.ts). Single Redis; one browser context per test.
 *
 * Failure matrix (what each cell covers):
 * | cell                                 | checked                                                                      |
 * | the Groups tab                       | a delay type's view has it; the ordered type's has none                      |
 * | list and pages                       | 50 rows a page, the largest backlog first, "1–50 of 120"; Next, Next (20 rows, Next disabled), Previous, First; the names shown on the pages are the groups service's pages |
 * | a hostile group name                 | '<script>…</script>', '/', '%', quotes: shown as text in the row, the form and the notice (no element made of it, no script run), addressed by its URL-encoded path |
 * | pause and resume from a row          | the row's button writes it (TaskGroupsService.getGroup), the row shows "paused", then "runs" |
 * | concurrency and weight               | a row's name fills the form; set from it, shown in the row, in Redis; cleared ("Clear"): absent again |
 * | bad input typed in the form          | 1001 as the weight: the error banner names the field (InvalidArgumentError), nothing written |
 * | a group without a backlog            | named in the form (not listed), paused; the notice shows it as the API answers |
 */
import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'net';
import type { Page } from 'playwright-core';
import { DistributedQueueDashboardModule, DistributedQueueModule, TaskGroupsService, TaskSubmitService } from 'nestjs-distributed-queue';
import { signedInPage, textUntil, useBrowser } from './support/browser';
import { workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const TOKEN = 'test-token-for-the-groups-page';
const target = getTargets().find((t) => t.name === 'single');
const TYPE = 'gb.tenants';
/** The largest backlog: first in the list. */
const HOSTILE = `<script>window.__pwned = 1</script> a/b 100% "q" 'x'`;
const TENANTS = Array.from({ length: 119 }, (_, i) => `tenant-${String(i).padStart(3, '0')}`);

/** The selector of an element whose attribute is `value` (a CSS string: quotes and backslashes escaped). */
const attr = (name: string, value: string) => `[${name}="${value.replace(/["\\]/g, (c) => `\\${c}`)}"]`;
const row = (group: string) => `[data-testid="group-row"]${attr('data-group', group)}`;

(target ? describe : describe.skip)('groups on the dashboard page (single Redis)', () => {
  let app: INestApplication;
  let base: string;
  let groups: TaskGroupsService;

  beforeAll(async () => {
    const prefix = uniquePrefix('dash-groups');
    @Module({
      imports: [
        DistributedQueueModule.forRoot({
          connection: target!.connection, keyPrefix: prefix, route: routeTestOptions(prefix, 'machine-1', 2), types: { [TYPE]: {} },
        }),
        DistributedQueueDashboardModule.forRoot({ path: '/queues', token: TOKEN }),
      ],
      providers: [workerClass('gb.ordered', { ordered: true }, () => undefined)],
    })
    class GroupsPageModule {}
    app = await NestFactory.create(GroupsPageModule, { logger: ['error'], abortOnError: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/queues`;
    groups = app.get(TaskGroupsService);
    // the tenants hold 1 to 3 tasks, the hostile name 10; delayed an hour: nothing runs them away
    const tasks = [
      ...Array.from({ length: 10 }, () => ({ payload: {}, group: HOSTILE, delay: 3_600_000 })),
      ...TENANTS.flatMap((group, i) => Array.from({ length: (i % 3) + 1 }, () => ({ payload: {}, group, delay: 3_600_000 }))),
    ];
    await app.get(TaskSubmitService).submitMany(TYPE, tasks);
  }, 40_000);

  afterAll(async () => {
    await app?.close();
  });

  const pages = useBrowser();
  const signedIn = (hash = '') => signedInPage(pages, base, TOKEN, hash);
  const rowNames = (page: Page) => page.locator('[data-testid="group-row"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-group')));
  /** Waits for the pager to say `info`, then answers the rows' names. */
  const pageOf = async (page: Page, info: string) => {
    await textUntil(page, '[data-testid="groups-info"]', (t) => t === info, info);
    return rowNames(page);
  };
  const serviceNames = async (offset: number) => (await groups.getGroups(TYPE, { offset, limit: 50 })).groups.map((g) => g.group);

  it('the Groups tab lists the groups by backlog and pages through them by 50; the ordered type has no tab', async () => {
    const page = await signedIn(`/types/${TYPE}`);
    await page.click('[data-testid="tab-groups"]');
    const first = await pageOf(page, '1–50 of 120');
    expect(first).toEqual(await serviceNames(0));
    expect(first[0]).toBe(HOSTILE);
    expect(await page.locator('[data-testid="groups-prev"]').getAttribute('class')).toContain('disabled');
    await page.click('[data-testid="groups-next"]');
    expect(await pageOf(page, '51–100 of 120')).toEqual(await serviceNames(50));
    await page.click('[data-testid="groups-next"]');
    const last = await pageOf(page, '101–120 of 120');
    expect(last).toEqual(await serviceNames(100));
    expect(new Set([...first, ...(await serviceNames(50)), ...last])).toEqual(new Set([HOSTILE, ...TENANTS]));
    expect(await page.locator('[data-testid="groups-next"]').getAttribute('class')).toContain('disabled');
    await page.click('[data-testid="groups-prev"]');
    expect(await pageOf(page, '51–100 of 120')).toEqual(await serviceNames(50));
    await page.click('[data-testid="groups-first"]');
    expect(await pageOf(page, '1–50 of 120')).toEqual(first);

    await page.goto(`${base}/#/types/gb.ordered`);
    await page.locator('[data-testid="type-view"][data-type="gb.ordered"] [data-testid="tab-ready"]').waitFor();
    await textUntil(page, '[data-testid="type-view"] h1', (t) => t.includes('ordered'), 'the ordered type\'s view');
    expect(await page.locator('[data-testid="tab-groups"]').count()).toBe(0);
  });

  it('shows a hostile group name as text and pauses and resumes it from its row', async () => {
    const page = await signedIn(`/types/${TYPE}?view=groups`);
    await page.locator(row(HOSTILE)).waitFor();
    expect(await page.locator(`${row(HOSTILE)} [data-testid="group-link"]`).textContent()).toBe(HOSTILE);
    expect(await page.evaluate('({ pwned: window.__pwned, scripts: document.querySelectorAll("script").length })')).toEqual({ scripts: 1 });
    expect(await textUntil(page, `${row(HOSTILE)} [data-testid="group-waiting"]`, (t) => t !== '', 'waiting')).toBe('10');

    await page.click(`${row(HOSTILE)} [data-testid="group-pause"]`);
    await textUntil(page, `${row(HOSTILE)} [data-testid="group-status"]`, (t) => t === 'paused', 'the row shows it paused');
    expect(await textUntil(page, '[data-testid="groups-panel"] [data-testid="notice"]', (t) => t !== '', 'the notice')).toBe(`${HOSTILE}: paused, concurrency —, weight —`);
    expect(await groups.getGroup(TYPE, HOSTILE)).toMatchObject({ group: HOSTILE, paused: true, waiting: 10 });
    expect(await groups.getGroup(TYPE, TENANTS[0])).toMatchObject({ paused: false });
    await page.click(`${row(HOSTILE)} [data-testid="group-resume"]`);
    await textUntil(page, `${row(HOSTILE)} [data-testid="group-status"]`, (t) => t === 'runs', 'the row shows it running');
    expect((await groups.getGroup(TYPE, HOSTILE)).paused).toBe(false);
  });

  it('sets and clears a group\'s concurrency and weight from the form; a bad value is refused and nothing written', async () => {
    const page = await signedIn(`/types/${TYPE}?view=groups`);
    await page.click(`${row(HOSTILE)} [data-testid="group-link"]`);
    await waitFor(async () => (await page.inputValue('[data-testid="group-name"]')) === HOSTILE, { message: 'the row\'s name in the form' });

    await page.fill('[data-testid="group-concurrency-n"]', '2');
    await page.click('[data-testid="group-concurrency-set"]');
    await textUntil(page, `${row(HOSTILE)} [data-testid="group-concurrency"]`, (t) => t === '2', 'the concurrency in the row');
    await page.fill('[data-testid="group-weight-n"]', '3');
    await page.click('[data-testid="group-weight-set"]');
    await textUntil(page, `${row(HOSTILE)} [data-testid="group-weight"]`, (t) => t === '3', 'the weight in the row');
    expect(await groups.getGroup(TYPE, HOSTILE)).toMatchObject({ concurrency: 2, weight: 3 });

    // the form lets any whole number from 1 through: the server bounds the weight (1000)
    await page.fill('[data-testid="group-weight-n"]', '1001');
    await page.click('[data-testid="group-weight-set"]');
    await textUntil(page, '[data-testid="groups-panel"] [data-testid="error-banner"]', (t) => t.includes('InvalidArgumentError') && t.includes('"weight"'), 'a weight over 1000 refused');
    expect(await groups.getGroup(TYPE, HOSTILE)).toMatchObject({ concurrency: 2, weight: 3 });

    await page.click('[data-testid="group-concurrency-clear"]');
    await textUntil(page, `${row(HOSTILE)} [data-testid="group-concurrency"]`, (t) => t === '—', 'the concurrency cleared in the row');
    await page.click('[data-testid="group-weight-clear"]');
    await textUntil(page, `${row(HOSTILE)} [data-testid="group-weight"]`, (t) => t === '—', 'the weight cleared in the row');
    const cleared = await groups.getGroup(TYPE, HOSTILE);
    expect([cleared.concurrency, cleared.weight]).toEqual([undefined, undefined]);
  });

  it('pauses a group without a backlog by its name', async () => {
    const page = await signedIn(`/types/${TYPE}?view=groups`);
    const name = 'quiet / 50% "tenant"';
    await page.fill('[data-testid="group-name"]', name);
    await page.click('[data-testid="group-form-pause"]');
    expect(await textUntil(page, '[data-testid="groups-panel"] [data-testid="notice"]', (t) => t !== '', 'the notice')).toBe(`${name}: paused, concurrency —, weight —`);
    expect(await groups.getGroup(TYPE, name)).toEqual({ group: name, waiting: 0, due: 0, running: 0, paused: true });
    expect(await pageOf(page, '1–50 of 120')).not.toContain(name);
  });
});
