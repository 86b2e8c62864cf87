/**
 * Every route of the dashboard's API with bad input of every kind: path parameters (unknown, malformed and
 * overlong types, ids and groups, an ordered type where a delay type is meant), query strings (bad states,
 * limits, offsets, cursors) and bodies (not JSON, JSON of the wrong shape, wrong field types, out of range,
 * oversized). The routes are read from the controller's source, so a route added later is swept too.
 *
 * | cell                                         | expected                                                        |
 * |----------------------------------------------|-----------------------------------------------------------------|
 * | every route × every bad parameter, query and  | an answer below 500, never 500: a typed 4xx (`error.name`), but |
 * | body (4,692 calls)                            | for what the application's body parser refuses (400, 413)       |
 * | the same with bad credentials (Basic, a forged | below 500                                                       |
 * | session cookie); sign-in with any token        |                                                                 |
 */
import * as path from 'path';
import { REPO_ROOT } from './support/child';
import { TOKEN, useDashboards } from './support/dashboard';
import { routesOf, sweepRoutes } from './support/http-garbage';
import { workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';

const CONTROLLER = path.join(REPO_ROOT, 'libs', 'distributed-queue', 'src', 'dashboard', 'dashboard.controller.ts');

describe.each(getTargets().map((t) => [t.name, t] as const))('dashboard API with bad input on %s', (_name, target) => {
  const { start } = useDashboards();

  it('answers every route and bad input below 500, typed', async () => {
    const keyPrefix = uniquePrefix('dash-garbage');
    const Acct = workerClass('acct', { ordered: true }, () => undefined);
    const { call, submit } = await start(
      { connection: target.connection, keyPrefix, route: routeTestOptions(keyPrefix, 'm1', 2), types: { mail: {} } },
      { token: TOKEN }, [Acct],
    );
    await submit.submitMany('mail', ['a', 'b'].map((id) => ({ id, payload: { id }, delay: 600_000, group: 'g' })));
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const { calls, answered, failures } = await sweepRoutes(routesOf(CONTROLLER, 'api/'), call, headers);
    console.log(`[dashboard-garbage] ${calls} calls`);
    expect(answered).toBeGreaterThan(0);
    expect(failures).toEqual([]);
  }, 600_000);

  it('answers every route below 500 with bad credentials, and a sign-in of any token', async () => {
    const { call } = await start({ connection: target.connection, keyPrefix: uniquePrefix('dash-garbage-auth'), types: { mail: {} }, workers: false }, { token: TOKEN }, []);
    const routes = routesOf(CONTROLLER);
    const failures: string[] = [];
    const credentials: Record<string, string>[] = [{ authorization: 'Basic x' }, { cookie: 'dq_dash=forged; dq_csrf=x', 'x-csrf-token': 'x' }];
    for (const headers of credentials) {
      failures.push(...(await sweepRoutes(routes, call, { 'content-type': 'application/json', ...headers })).failures);
    }
    for (const query of ['', '?token=', '?token=x', `?token=${'x'.repeat(10_000)}`, '?token[]=a&token[]=b', '?token=%00', `?token=${TOKEN}&token=${TOKEN}`, '?next=//evil.example']) {
      const res = await call(`/login${query}`);
      if (res.status >= 500) failures.push(`GET /login${query.slice(0, 40)} → ${res.status}`);
      await res.text();
    }
    expect(failures).toEqual([]);
  }, 600_000);
});
