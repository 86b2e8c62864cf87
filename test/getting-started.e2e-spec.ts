/**
 * docs/getting-started.md, "Running it": the page's application (test/fixtures/getting-started/*.ts, the
 * page's snippets word for word) started as the page says (its main.ts, in a process of its own, REDIS_URL
 * and PORT from the environment) and called as the page's curl lines do, answering what the page shows:
 * the close task delayed by 30 minutes, then cancelled by paying (state unknown); SIGTERM stops it.
 * Single server (the page's REDIS_URL is a URL).
 */
import { killAllChildren, spawnChild } from './support/child';
import { getFreePort } from './support/redis-server';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

// NOTE: a child process with Nest and the library transpiled: its first start on a loaded machine is slow.
jest.setTimeout(120_000);

const single = getTargets().find((t) => t.name === 'single');

async function call(base: string, method: 'GET' | 'POST', path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${path}`, { method, signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

(single ? describe : describe.skip)('the getting-started application', () => {
  afterEach(() => killAllChildren());

  it('submits the close task, shows it delayed 30 minutes, cancels it on pay, and stops on SIGTERM', async () => {
    const port = await getFreePort();
    const base = `http://127.0.0.1:${port}`;
    const app = spawnChild('test/fixtures/getting-started/main.ts', { REDIS_URL: String(single!.connection), PORT: String(port), QUEUE_PREFIX: uniquePrefix('getting-started') });
    await waitFor(() => call(base, 'GET', '/orders/none/close-task').then(() => true, () => false), { timeoutMs: 90_000, intervalMs: 200, message: `the application listens\n${app.output()}` });

    const before = Date.now();
    expect(await call(base, 'POST', '/orders/o-1')).toEqual({ status: 201, body: undefined });
    const task = await call(base, 'GET', '/orders/o-1/close-task');
    expect(task).toEqual({ status: 200, body: { id: 'o-1', type: 'order.close', state: 'delayed', attempts: 0, dueAt: expect.any(Number), payload: { orderId: 'o-1' } } });
    const dueAt = (task.body as { dueAt: number }).dueAt;
    expect(dueAt).toBeGreaterThanOrEqual(before + 30 * 60_000 - 1000);
    expect(dueAt).toBeLessThanOrEqual(Date.now() + 30 * 60_000 + 1000);

    expect((await call(base, 'POST', '/orders/o-1/pay')).status).toBe(201);
    expect(await call(base, 'GET', '/orders/o-1/close-task')).toEqual({ status: 200, body: { id: 'o-1', type: 'order.close', state: 'unknown' } });

    app.kill('SIGTERM');
    const exit = await app.exited;
    expect(exit.code === 0 || exit.signal === 'SIGTERM').toBe(true);
  });
});
