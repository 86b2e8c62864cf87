/**
 * Odd names on the dashboard's page, as an operator reaches them (test odd-names covers the API): types and
 * task ids holding what a hash route, a query string or a URL path could mistake (`/`, `?`, `#`, `&`, `%`,
 * `=`, `+`, spaces, `__proto__`, emoji, quotes, markup), driven by a headless Chromium. Single Redis.
 *
 * Failure matrix (what each cell covers):
 * | cell | checked |
 * | odd types | each reached from the overview's link: the type's view names it exactly, its delayed task listed |
 * | odd task ids | each row's link opens the detail of the exact id and payload; "Run now" runs that task (the handler gets that id), no other |
 * | names that show nothing | an id of white space, of a zero-width space, a type and a group of a zero-width space: shown as their JSON strings, so the link has a label to click (before: an empty link no one could click) |
 * | markup in a name | shown as text: no element made of it, no script run |
 */
import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'net';
import { DistributedQueueDashboardModule, DistributedQueueModule, TaskSubmitService } from 'nestjs-distributed-queue';
import { signedInPage, textUntil, useBrowser } from './support/browser';
import { workerClass } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const TOKEN = 'test-token-for-odd-names';
const target = getTargets().find((t) => t.name === 'single');
const MARKUP = '<img src=x onerror="window.__pwned=1">';
/** Types: no braces or white space. */
const TYPES = ['a/b', '\u200b', 'q?x=1', 'h#frag', 'p%2F%', 'amp&k=v', '__proto__', 'constructor', '😀.t', "quo'te\"s", MARKUP.replace(/\s/g, '')];
/** Task ids of the first type. */
const IDS = ['a/b/../c', '?state=dead', 'x#/route', 'k=v&task=x', '100%', '%2F', 'a+b c', '__proto__', 'toString', '😀', 'é', 'e\u0301', MARKUP, ' ', '\u200b', "'\"", '\\'];
/** How the page shows a name: itself, or its JSON string when it shows nothing. */
const shown = (name: string) => (/^[\s\u200b]*$/.test(name) ? JSON.stringify(name) : name);

/** The selector of an element whose attribute is `value` (a CSS string: quotes and backslashes escaped). */
const attr = (name: string, value: string) => `[${name}="${value.replace(/["\\]/g, (c) => `\\${c}`)}"]`;

(target ? describe : describe.skip)('odd names on the dashboard page (single Redis)', () => {
  let app: INestApplication;
  let base: string;
  const ran: string[] = [];

  beforeAll(async () => {
    @Module({
      imports: [
        DistributedQueueModule.forRoot({ connection: target!.connection, keyPrefix: uniquePrefix('dash-odd') }),
        DistributedQueueDashboardModule.forRoot({ path: '/queues', token: TOKEN }),
      ],
      providers: TYPES.map((type) => workerClass(type, {}, (t) => void ran.push(`${t.type}\n${t.id}`))),
    })
    class OddNamesModule {}
    app = await NestFactory.create(OddNamesModule, { logger: ['error'], abortOnError: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/queues`;
    const submit = app.get(TaskSubmitService);
    for (const type of TYPES) await submit.submit(type, { type }, { id: `in-${type}`, delay: 3_600_000 });
    for (const [i, id] of IDS.entries()) await submit.submit(TYPES[0], { i }, { id, delay: 3_600_000 });
  }, 40_000);

  afterAll(async () => {
    await app?.close();
  });

  const pages = useBrowser();

  it('each odd type is reached from the overview: its view names it, its task listed', async () => {
    const page = await signedInPage(pages, base, TOKEN);
    for (const type of TYPES) {
      await page.goto(`${base}/#/`);
      await page.locator(`[data-testid="type-row"]${attr('data-type', type)} [data-testid="type-link"]`).click();
      await textUntil(page, '[data-testid="type-name"]', (t) => t === shown(type), `the view of ${JSON.stringify(type)}`);
      await page.locator('[data-testid="tab-delayed"]').click();
      await page.locator(`[data-testid="task-row"]${attr('data-id', `in-${type}`)}`).waitFor();
    }
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
  });

  it("each odd id's link opens its detail; Run now runs that task and no other", async () => {
    const page = await signedInPage(pages, base, TOKEN, `/types/${encodeURIComponent(TYPES[0])}?state=delayed`);
    page.on('dialog', (dialog) => void dialog.accept());
    for (const [i, id] of IDS.entries()) {
      await page.locator(`[data-testid="task-row"]${attr('data-id', id)} [data-testid="task-link"]`).click();
      await page.locator(`[data-testid="task-detail"]${attr('data-id', id)}`).waitFor();
      expect(await page.locator('[data-testid="detail-id"]').textContent()).toBe(shown(id));
      expect(JSON.parse((await page.locator('[data-testid="task-payload"]').textContent()) ?? '')).toEqual({ i });
      await page.locator('[data-testid="action-run-now"]').click();
      await waitFor(() => ran.includes(`${TYPES[0]}\n${id}`), { timeoutMs: 5000, message: `${JSON.stringify(id)} ran` });
    }
    expect(ran.filter((r) => r.startsWith(`${TYPES[0]}\n`)).sort()).toEqual(IDS.map((id) => `${TYPES[0]}\n${id}`).sort());
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
  });

  it("a group that shows nothing is listed by its JSON string; its link selects it", async () => {
    await app.get(TaskSubmitService).submit(TYPES[0], {}, { group: '\u200b', delay: 3_600_000 });
    const page = await signedInPage(pages, base, TOKEN, `/types/${encodeURIComponent(TYPES[0])}?view=groups`);
    const link = page.locator(`[data-testid="group-row"]${attr('data-group', '\u200b')} [data-testid="group-link"]`);
    expect(await link.textContent()).toBe(JSON.stringify('\u200b'));
    await link.click();
    await waitFor(async () => (await page.locator('[data-testid="group-name"]').inputValue()) === '\u200b', { timeoutMs: 5000, message: 'the group selected' });
  });
});
