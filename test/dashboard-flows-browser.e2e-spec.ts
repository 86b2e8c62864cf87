/**
 * Flows on the dashboard's page, as an operator uses it (issue 30, item 4): a Nest HTTP application with a
 * delay type whose worker runs (one node fails), a delay type without a worker (its nodes wait), an ordered
 * type and the dashboard, driven by a headless Chromium (test/support/browser.ts). Single Redis; one browser
 * context per test.
 *
 * Failure matrix (what each cell covers):
 * | cell                        | checked                                                                           |
 * | the list                    | the Flows tab lists the flows newest first with state and counts as listFlows says; a row opens its flow |
 * | nodes and states            | one box per node, each with the state getFlow reads (completed, dead, blocked, pending, ready, delayed) |
 * | layers                      | a node's box is right of every dependency's box, same-depth boxes share a column  |
 * | edges                       | one path per dependency, from the dependency to its dependent, no other          |
 * | colours and legend          | each box's fill is its state's swatch in the legend; different states, different colours; the legend counts the nodes |
 * | a node's link               | a delay node opens its task's detail (id, state) in its type's view, which links back to the flow, as its history row does (its flowId); an ordered node opens its type's listing |
 * | a hostile ref               | markup in a ref is shown as text (no element made of it, no script run)           |
 * | a big flow                  | 350 nodes: 300 boxes drawn, the page says so, the other 50 listed (links to their tasks) |
| a huge flow                 | 10,000 nodes in 4 layers: the page opens (within 30 s), the API sends every node, 300 drawn, 9,700 listed 100 a page (Next) |
 * | cancel from the page        | asks first; the notice counts what was cancelled; the flow shows cancelled (getFlow agrees) |
 */
import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'net';
import type { Page } from 'playwright-core';
import { DistributedQueueDashboardModule, DistributedQueueModule, TaskFlowService, TaskHistoryService, type FlowInfo, type Task } from 'nestjs-distributed-queue';
import { signedInPage, textUntil, useBrowser } from './support/browser';
import { PG_URL, pgQuery, testSchemaName } from './support/pg';
import { workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const TOKEN = 'test-token-for-the-flows-page';
const target = getTargets().find((t) => t.name === 'single');
const HOUR = 3_600_000;
const HOSTILE = '<img src=x onerror="window.__pwned=1"> & "q"';
const FLOW = 'shown.1';

/** The selector of an element whose attribute is `value` (a CSS string: quotes and backslashes escaped). */
const attr = (name: string, value: string) => `[${name}="${value.replace(/["\\]/g, (c) => `\\${c}`)}"]`;
/** The page's getComputedStyle (the tests' TypeScript has no DOM library). */
interface Styles {
  getComputedStyle(element: unknown): { fill: string; backgroundColor: string };
}
const box = (ref: string) => `[data-testid="flow-node"]${attr('data-ref', ref)}`;

(target ? describe : describe.skip)('flows on the dashboard page (single Redis)', () => {
  let app: INestApplication;
  let base: string;
  let flows: TaskFlowService;
  let shown: FlowInfo;
  const schema = testSchemaName();

  beforeAll(async () => {
    const prefix = uniquePrefix('dash-flows');
    @Module({
      imports: [
        DistributedQueueModule.forRoot({
          connection: target!.connection, keyPrefix: prefix, route: routeTestOptions(`${prefix}-q`, 'machine-1', 2),
          types: { 'fb.work': { maxAttempts: 1 }, 'fb.idle': {} }, history: { connection: PG_URL, schema, flushIntervalMs: 50 },
        }),
        DistributedQueueDashboardModule.forRoot({ path: '/queues', token: TOKEN }),
      ],
      providers: [
        workerClass('fb.work', { pollIntervalMs: 100 }, (t: Task<{ fail?: boolean }>) => {
          if (t.payload.fail) throw new RangeError('no luck');
          return 'ok';
        }),
        workerClass('fb.ord', { ordered: true }, () => 'ordered'),
      ],
    })
    class FlowsPageModule {}
    app = await NestFactory.create(FlowsPageModule, { logger: ['error'], abortOnError: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/queues`;
    flows = app.get(TaskFlowService);
    await flows.submitFlow([{ ref: 'r', type: 'fb.idle', payload: {}, delay: HOUR }], { id: 'older.0' });
    await new Promise((r) => setTimeout(r, 5));
    await flows.submitFlow([
      { ref: 'a', type: 'fb.work', payload: {} },
      { ref: 'b', type: 'fb.work', payload: {}, dependsOn: ['a'] },
      { ref: 'ord', type: 'fb.ord', key: 'k1', payload: {}, dependsOn: ['a'] },
      { ref: 'c', type: 'fb.work', payload: {}, dependsOn: ['b', 'ord'] },
      { ref: 'bad', type: 'fb.work', payload: { fail: true } },
      { ref: 'blocked', type: 'fb.work', payload: {}, dependsOn: ['bad'] },
      { ref: 'wait', type: 'fb.idle', payload: {} },
      { ref: 'pend', type: 'fb.work', payload: {}, dependsOn: ['wait', 'c'] },
      { ref: 'later', type: 'fb.idle', payload: {}, delay: HOUR },
      { ref: HOSTILE, type: 'fb.idle', payload: {}, delay: HOUR, dependsOn: [] },
    ], { id: FLOW });
    const settled = { a: 'completed', b: 'completed', ord: 'completed', c: 'completed', bad: 'dead', blocked: 'blocked', wait: 'ready', pend: 'pending', later: 'delayed' };
    shown = await waitFor(async () => {
      const flow = (await flows.getFlow(FLOW))!;
      return Object.entries(settled).every(([ref, state]) => flow.nodes.find((n) => n.ref === ref)?.state === state) ? flow : null;
    }, { timeoutMs: 30_000, message: 'the shown flow settled' });
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await pgQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  const pages = useBrowser();
  const signedIn = (hash = '') => signedInPage(pages, base, TOKEN, hash);
  const boxes = (page: Page) => page.locator('[data-testid="flow-node"]').evaluateAll((els) => els.map((e) => {
    const rect = e.querySelector('rect')!;
    return { ref: e.getAttribute('data-ref'), state: e.getAttribute('data-state'), x: Number(rect.getAttribute('x')), fill: (globalThis as unknown as Styles).getComputedStyle(rect).fill, text: e.querySelector('text')!.textContent };
  }));

  it('lists the flows newest first and opens one: a box per node in its state, in layers, edges for the dependencies', async () => {
    const page = await signedIn();
    await page.click('[data-testid="nav-flows"]');
    await page.locator('[data-testid="flow-row"]').nth(1).waitFor();
    const rows = await page.locator('[data-testid="flow-row"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-flow')));
    expect(rows).toEqual((await flows.listFlows()).map((f) => f.id));
    expect(rows).toEqual([FLOW, 'older.0']);
    expect(await textUntil(page, `[data-testid="flow-row"]${attr('data-flow', FLOW)} [data-testid="flow-row-state"]`, (t) => t !== '', 'state')).toBe('running');
    expect(await page.locator(`[data-testid="flow-row"]${attr('data-flow', FLOW)} [data-testid="flow-row-dead"]`).textContent()).toBe('1');

    await page.click(`[data-testid="flow-row"]${attr('data-flow', FLOW)} [data-testid="flow-link"]`);
    await page.locator(box('pend')).waitFor();
    const drawn = await boxes(page);
    expect(drawn.map((b) => [b.ref, b.state]).sort()).toEqual(shown.nodes.map((n) => [n.ref, n.state]).sort());
    const x = (ref: string) => drawn.find((b) => b.ref === ref)!.x;
    for (const node of shown.nodes) for (const dep of node.dependsOn) expect([dep, node.ref, x(dep) < x(node.ref)]).toEqual([dep, node.ref, true]);
    expect(new Set(['a', 'bad', 'wait', 'later', HOSTILE].map(x)).size).toBe(1);
    expect(x('b')).toBe(x('ord'));
    expect(x('c')).toBeGreaterThan(x('b'));
    expect(x('pend')).toBeGreaterThan(x('c'));

    const edges = await page.locator('[data-testid="flow-edge"]').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-from')}->${e.getAttribute('data-to')}`));
    expect(edges.sort()).toEqual(shown.nodes.flatMap((n) => n.dependsOn.map((d) => `${d}->${n.ref}`)).sort());
    expect(edges).toHaveLength(7);
  });

  it('colours each box as its state in the legend, shows a hostile ref as text, and a node links to its task', async () => {
    const page = await signedIn(`/flows/${FLOW}`);
    await page.locator(box('pend')).waitFor();
    const drawn = await boxes(page);
    const swatches: Record<string, { colour: string; text: string }> = Object.fromEntries(await page.locator('[data-testid="legend-item"]').evaluateAll((els) => els.map((e) => [
      e.getAttribute('data-state'), { colour: (globalThis as unknown as Styles).getComputedStyle(e.querySelector('[data-testid="legend-swatch"]')!).backgroundColor, text: e.textContent!.replace(/\s+/g, ' ').trim() },
    ])));
    expect(Object.keys(swatches)).toEqual(['pending', 'blocked', 'delayed', 'ready', 'running', 'completed', 'dead', 'cancelled']);
    expect(new Set(Object.values(swatches).map((s) => s.colour)).size).toBe(8);
    for (const b of drawn) expect([b.ref, b.fill]).toEqual([b.ref, swatches[b.state!].colour]);
    expect(swatches.completed.text).toBe('completed 4');
    expect(swatches.delayed.text).toBe('delayed 2');

    expect(drawn.find((b) => b.ref === HOSTILE)!.text).toBe(`${HOSTILE.slice(0, 19)}…`);
    expect(await page.locator(`${box(HOSTILE)} title`).textContent()).toBe(`${HOSTILE} (fb.idle): delayed`);
    expect(await page.evaluate('({ pwned: window.__pwned, images: document.querySelectorAll("img").length })')).toEqual({ images: 0 });

    await app.get(TaskHistoryService).flush();
    await page.click(box('wait'));
    await page.locator('[data-testid="task-detail"]').waitFor();
    expect(await textUntil(page, '[data-testid="history-flow"]', (t) => t !== '', 'the history row\'s flow')).toBe(FLOW);
    expect(new URL(page.url()).hash).toBe(`#/types/fb.idle?state=ready&task=${encodeURIComponent(`&${FLOW}:wait`)}`);
    expect(await page.locator('[data-testid="detail-id"]').textContent()).toBe(`&${FLOW}:wait`);
    expect(await textUntil(page, '[data-testid="detail-state"]', (t) => t !== '', 'the task state')).toBe('ready');
    await page.click('[data-testid="flow-of-task"]');
    await page.locator(box('wait')).waitFor();
    expect(new URL(page.url()).hash).toBe(`#/flows/${FLOW}`);

    await page.click(box('ord'));
    await page.locator('[data-testid="type-view"][data-type="fb.ord"]').waitFor();
    expect(new URL(page.url()).hash).toBe(`#/types/fb.ord?state=done&task=${encodeURIComponent(`&${FLOW}:ord`)}`);
    expect(await page.locator('[data-testid="task-detail"]').getAttribute('data-id')).toBe(`&${FLOW}:ord`);
  });

  it('a flow of 350 nodes: 300 drawn, the page says so, the other 50 listed', async () => {
    const nodes = [{ ref: 'root', type: 'fb.idle', payload: {}, delay: HOUR }, ...Array.from({ length: 349 }, (_, i) => ({
      ref: `n${String(i).padStart(3, '0')}`, type: 'fb.idle', payload: {}, dependsOn: ['root'],
    }))];
    const { id } = await flows.submitFlow(nodes, { id: 'big.1' });
    const page = await signedIn(`/flows/${id}`);
    await textUntil(page, '[data-testid="flow-capped"]', (t) => t !== '', 'the cap notice');
    expect(await page.locator('[data-testid="flow-capped"]').textContent()).toBe('350 nodes: the first 300 (by depth) are drawn, the other 50 listed below.');
    expect(await page.locator('[data-testid="flow-node"]').count()).toBe(300);
    expect(await page.locator('[data-testid="flow-edge"]').count()).toBe(299);
    // by layer, then by ref: the root, n000 to n298 drawn; n299 to n348 listed
    const rest = await page.locator('[data-testid="rest-row"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-ref')!));
    const drawn = await page.locator('[data-testid="flow-node"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-ref')!));
    expect(drawn.sort()).toEqual(nodes.slice(0, 300).map((n) => n.ref).sort());
    expect(rest).toEqual(nodes.slice(300).map((n) => n.ref));
    expect(await page.locator('[data-testid="rest-info"]').textContent()).toBe('1–50 of 50');
    const last = rest[49];
    expect(await page.locator(`[data-testid="rest-row"]${attr('data-ref', last)} [data-testid="rest-state"]`).textContent()).toBe('pending');
    expect(await page.locator(`[data-testid="rest-row"]${attr('data-ref', last)} [data-testid="rest-link"]`).getAttribute('href'))
      .toBe(`#/types/fb.idle?task=${encodeURIComponent(`&${id}:${last}`)}`);
  });

  it('a flow of 10,000 nodes opens within bounds: 300 drawn, the rest listed 100 a page', async () => {
    // a root and 9,999 dependents in chains of 3 (layers 1 to 3)
    const nodes = [{ ref: 'root', type: 'fb.idle', payload: {}, delay: HOUR, dependsOn: [] as string[] }];
    for (let i = 0; nodes.length < 10_000; i++) {
      const ref = `m${String(i).padStart(5, '0')}`;
      nodes.push({ ref, type: 'fb.idle', payload: {}, delay: 0, dependsOn: [i % 3 === 0 ? 'root' : `m${String(i - 1).padStart(5, '0')}`] });
    }
    const { id } = await flows.submitFlow(nodes, { id: 'huge.1' });
    // NOTE: a generous bound (a loaded machine), not a speed claim: the page opens, it does not hang
    const page = await signedIn(`/flows/${id}`);
    await page.locator('[data-testid="flow-capped"]').waitFor({ timeout: 30_000 });
    const res = await fetch(`${base}/api/flows/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect([res.status, ((await res.json()) as FlowInfo).nodes.length]).toEqual([200, 10_000]);
    expect(await page.locator('[data-testid="flow-node"]').count()).toBe(300);
    expect(await page.locator('[data-testid="rest-row"]').count()).toBe(100);
    expect(await page.locator('[data-testid="rest-info"]').textContent()).toBe('1–100 of 9700');
    await page.click('[data-testid="rest-next"]');
    await textUntil(page, '[data-testid="rest-info"]', (t) => t === '101–200 of 9700', 'the second page of the list');
    expect(await page.locator('[data-testid="flow-legend"] [data-state="pending"]').textContent()).toMatch(/pending 9999/);
  }, 60_000);

  it('cancels a flow from the page after asking', async () => {
    const { id } = await flows.submitFlow([
      { ref: 'w', type: 'fb.idle', payload: {}, delay: HOUR },
      { ref: 'x', type: 'fb.idle', payload: {}, dependsOn: ['w'] },
    ], { id: 'to.cancel' });
    const page = await signedIn(`/flows/${id}`);
    await page.locator(box('x')).waitFor();
    await page.click('[data-testid="flow-cancel"]');
    expect((await flows.getFlow(id))!.state).toBe('running');
    await page.click('[data-testid="confirm-yes"]');
    expect(await textUntil(page, '[data-testid="notice"]', (t) => t !== '', 'the notice')).toBe('Cancelled 2 node(s); 0 running node(s) asked to stop');
    await textUntil(page, '[data-testid="flow-state"]', (t) => t === 'cancelled', 'the flow shows cancelled');
    expect(await page.locator(box('x')).getAttribute('data-state')).toBe('cancelled');
    expect(await page.locator('[data-testid="flow-cancel"]').count()).toBe(0);
    expect((await flows.getFlow(id))!.state).toBe('cancelled');
  });
});
