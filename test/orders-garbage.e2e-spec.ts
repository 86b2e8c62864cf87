/**
 * The orders sample's HTTP API (`npm start`, what a newcomer runs first) with bad input of every kind, as
 * dashboard-garbage does for the dashboard: every route of its controllers × bad path parameters, queries and
 * bodies.
 *
 * | cell                                                 | expected                                       |
 * |------------------------------------------------------|------------------------------------------------|
 * | every route of every controller × every bad input     | below 500 (a 4xx for what it refuses)          |
 */
import * as fs from 'fs';
import * as path from 'path';
import { killAllChildren, REPO_ROOT, spawnChild } from './support/child';
import { routesOf, sweepRoutes } from './support/http-garbage';
import { getFreePort, startRedisServer, type RedisServerHandle } from './support/redis-server';
import { waitFor } from './support/wait';

const SRC = path.join(REPO_ROOT, 'apps', 'orders', 'src');

/** Every controller file of the sample. */
function controllers(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return controllers(full);
    return e.name.endsWith('.controller.ts') ? [full] : [];
  });
}

describe('the orders sample with bad input', () => {
  let server: RedisServerHandle;
  beforeAll(async () => {
    server = await startRedisServer({ extraArgs: ['--save', ''] });
  });
  afterAll(async () => {
    await killAllChildren();
    await server.remove();
  });

  it('answers every route of every controller below 500', async () => {
    const port = await getFreePort();
    const base = `http://127.0.0.1:${port}`;
    spawnChild('apps/orders/src/main.ts', { PORT: String(port), REDIS_URL: server.url, MACHINE_ID: `garbage-${port}`, LOCAL_REDIS_PORT: '1' });
    await waitFor(() => fetch(`${base}/health`).then((r) => r.status === 200, () => false), { timeoutMs: 60_000, intervalMs: 250, message: 'the sample answers' });
    const routes = controllers().flatMap((file) => routesOf(file));
    expect(routes.length).toBeGreaterThan(5);
    const call = (p: string, init: RequestInit) => fetch(`${base}${p}`, init);
    const { calls, answered, failures } = await sweepRoutes(routes, call, { 'content-type': 'application/json' }, false);
    console.log(`[orders-garbage] ${calls} calls over ${routes.length} routes`);
    expect(answered).toBeGreaterThan(0);
    expect(failures).toEqual([]);
  }, 180_000);
});
