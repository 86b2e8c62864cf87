/**
 * Every route of the scheduler's HTTP API (`apps/scheduler`, `npm run start:scheduler`) with bad input of every
 * kind, as dashboard-garbage does for the dashboard: path parameters, query strings and bodies.
 *
 * | cell                                         | expected                                                        |
 * |----------------------------------------------|-----------------------------------------------------------------|
 * | every route × every bad parameter, query and  | an answer below 500, never 500: a typed 4xx (`error.name`), but |
 * | body                                          | for what the application's body parser refuses (400, 413)       |
 */
import * as path from 'path';
import { killAllChildren, REPO_ROOT } from './support/child';
import { routesOf, sweepRoutes } from './support/http-garbage';
import { API_TOKEN, startScheduler } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';

const CONTROLLER = path.join(REPO_ROOT, 'apps', 'scheduler', 'src', 'scheduler-api.controller.ts');
const target = getTargets()[0];

describe('the scheduler API with bad input', () => {
  afterEach(() => killAllChildren());

  it('answers every route and bad input below 500, typed', async () => {
    const scheduler = await startScheduler(target, uniquePrefix('sched-garbage'));
    const headers = { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' };
    const call = (p: string, init: RequestInit) => fetch(`${scheduler.url}/api${p}`, init);
    const { calls, failures } = await sweepRoutes(routesOf(CONTROLLER), call, headers);
    console.log(`[scheduler-garbage] ${calls} calls`);
    expect(failures).toEqual([]);
  }, 300_000);
});
