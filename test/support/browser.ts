import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { waitFor } from './wait';

/** Every wait of a page (a locator, a navigation), ms. */
const PAGE_WAIT_MS = 10_000;

/**
 * For a describe block of browser tests: a headless Chromium (playwright-core, the system's /usr/bin/chromium;
 * .ci/run installs it) launched before the block's tests, and a fresh context (no cookies) per test, closed
 * after it. `context()` is the current test's.
 */
export function useBrowser(): { newPage(): Promise<Page>; context(): BrowserContext } {
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      timeout: 20_000,
    });
  }, 30_000);
  afterEach(async () => {
    await context?.close();
    context = undefined;
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    async newPage() {
      context = await browser!.newContext();
      const page = await context.newPage();
      page.setDefaultTimeout(PAGE_WAIT_MS);
      page.setDefaultNavigationTimeout(PAGE_WAIT_MS);
      return page;
    },
    context: () => context!,
  };
}

/** Waits until the text of `selector` (white space folded, trimmed) satisfies `ok`; returns it. */
export function textUntil(page: Page, selector: string, ok: (text: string) => boolean, message: string): Promise<string> {
  return waitFor(async () => {
    const text = ((await page.locator(selector).first().textContent({ timeout: 1000 })) ?? '').replace(/\s+/g, ' ').trim();
    return ok(text) ? text : undefined;
  }, { timeoutMs: PAGE_WAIT_MS, intervalMs: 100, message });
}

/** A new page signed in to the dashboard at `base` with `token` (it lands on the page), then at `hash`. */
export async function signedInPage(pages: { newPage(): Promise<Page> }, base: string, token: string, hash = ''): Promise<Page> {
  const page = await pages.newPage();
  const res = await page.goto(`${base}/login?token=${token}`);
  expect(res?.status()).toBe(200);
  expect(page.url()).toBe(`${base}/`);
  if (hash) await page.goto(`${base}/#${hash}`);
  return page;
}
