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
import { signDelivery } from 'nestjs-distributed-queue';
import { api, API_TOKEN, SERVICE_SECRET, startScheduler } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';

const CONTROLLER = path.join(REPO_ROOT, 'apps', 'scheduler', 'src', 'scheduler-api.controller.ts');
const target = getTargets()[0];

describe('the scheduler API with bad input', () => {
  afterEach(() => killAllChildren());

  it('answers every route and bad input below 500, typed', async () => {
    const scheduler = await startScheduler(target, uniquePrefix('sched-garbage'));
    const headers = { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' };
    const call = (p: string, init: RequestInit) => fetch(`${scheduler.url}${p}`, init);
    const { calls, answered, failures } = await sweepRoutes(routesOf(CONTROLLER), call, headers);
    console.log(`[scheduler-garbage] ${calls} calls`);
    expect(answered).toBeGreaterThan(0);
    expect(failures).toEqual([]);
  }, 300_000);

  it("answers every signed call of bad shape on the applications' client path below 500, typed, writing nothing", async () => {
    const prefix = uniquePrefix('sched-rpc-garbage');
    const scheduler = await startScheduler(target, prefix);
    const values: unknown[] = [null, -1, 1.5, '', 'x'.repeat(300), true, {}, [], [null], [{}], { bogus: 1 }, 'bad{type'];
    const fields: Record<string, string[]> = {
      register: ['app', 'instance', 'types', 'ttlMs'], leave: ['app', 'instanceId'], submit: ['type', 'tasks', 'requestId'],
      cancel: ['type', 'id'], reschedule: ['type', 'id', 'due'], get: ['type', 'id'],
    };
    const base: Record<string, Record<string, unknown>> = {
      register: { app: 'shop', instance: null, types: {}, ttlMs: 1000 }, leave: { app: 'shop', instanceId: 'i' },
      submit: { type: 'mail', tasks: [{ id: 'a', due: { delay: 0 }, payload: '{}' }], requestId: 'r' },
      cancel: { type: 'mail', id: 'a' }, reschedule: { type: 'mail', id: 'a', due: { delay: 0 } }, get: { type: 'mail', id: 'a' },
    };
    const bodies: string[] = ['{}', '[]', '{"op":"nope"}', '{"op":null}'];
    for (const [op, names] of Object.entries(fields)) {
      for (const name of names) for (const value of values) bodies.push(JSON.stringify({ op, ...base[op], [name]: value }));
      bodies.push(JSON.stringify({ op, ...base[op], tasks: [{ id: 'a', due: { at: -1 }, payload: '{}', priority: 1.5, group: '' }] }));
    }
    const failures: string[] = [];
    let n = 0;
    for (const body of bodies) {
      const headers = { 'content-type': 'application/json', ...signDelivery(SERVICE_SECRET, Date.now(), `garbage-${n++}`, body) };
      const res = await fetch(`${scheduler.url}/dq/service`, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
      const text = await res.text();
      if (res.status >= 500 || (res.status >= 400 && !/"name"/.test(text))) failures.push(`${body.slice(0, 100)} → ${res.status} ${text.slice(0, 160)}`);
    }
    console.log(`[scheduler-garbage] ${bodies.length} signed calls`);
    expect(failures).toEqual([]);
    // the refused registrations wrote nothing: no application owns a type (the valid ones registered none)
    const { body: apps } = await api(scheduler, 'GET', '/api/apps');
    expect((apps as { types: object }[]).flatMap((a) => Object.keys(a.types))).toEqual([]);
  }, 120_000);
});
