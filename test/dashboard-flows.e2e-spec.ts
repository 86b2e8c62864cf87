/**
 * The dashboard's routes over flows (issue 30, item 4): `GET <base>/api/flows?offset=&limit=`,
 * `GET <base>/api/flows/:id`, `POST <base>/api/flows/:id/cancel`, against real servers (single and cluster).
 *
 * Failure matrix (what each cell covers):
 * | cell                                   | checked                                                                    |
 * | no auth / wrong token                  | 401 on every route (GET and POST), the flow not cancelled                  |
 * | cookie session without the CSRF header | 403 on the cancel (none, forged), the flow still running; with it 200, cancelled |
 * | list and pages                         | the newest first, as TaskFlowService.listFlows answers; limit 2: pages with `more`, the last without; the default page; an offset past the end: none |
 * | one flow                               | every node as getFlow reads it (states, dependsOn, results, errors); a result over 1 KiB: its size only (`resultBytes`) |
 * | unknown and bad ids                    | an unknown flow: 404 on GET and cancel; ids with a space, '&', ':', 65 characters: 400 InvalidFlowError, nothing written |
 * | bad queries                            | offset -1, 1.5, abc; limit 0, 201, ten: 400 InvalidArgumentError naming the field |
 * | cancel                                 | parked and waiting nodes counted as cancelled, a running node's handler aborted (cancelRequested 1), the flow ends cancelled; a repeat: 200 with 0 and 0 |
 */
import { TaskFlowService, type DashboardFlow, type DashboardFlowPage, type FlowCancelResult, type Task } from 'nestjs-distributed-queue';
import { flowEnded, nodeWorker, type NodeRun } from './support/flow-nodes';
import { signIn, TOKEN, useDashboards, type Call } from './support/dashboard';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { waitFor } from './support/wait';

const auth = { authorization: `Bearer ${TOKEN}` };
const json = { 'content-type': 'application/json' };
const HOUR = 3_600_000;

interface ErrorReply {
  error: { name: string; message: string };
}

describe.each(getTargets().map((t) => [t.name, t] as const))('dashboard flows API on %s', (_name, target: RedisTarget) => {
  const { start } = useDashboards();

  /** A dashboard app whose workers record runs; `slow` waits for its abort signal. */
  async function dashboard(label: string, runs: NodeRun[] = []) {
    const workers = [
      nodeWorker(runs, 'df.work', { concurrency: 4 }, (t: Task<{ out?: unknown; fail?: boolean }>) => {
        if (t.payload.fail) throw new RangeError('no luck');
        return t.payload.out;
      }),
      nodeWorker(runs, 'df.slow', {}, (_t: Task<unknown>, signal: AbortSignal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))))),
    ];
    const dash = await start({ connection: target.connection, keyPrefix: uniquePrefix(label), types: { 'df.work': { maxAttempts: 1 } } }, { token: TOKEN }, workers);
    return { ...dash, flows: dash.app.get(TaskFlowService) };
  }

  const bearer = (call: Call, method: string, path: string) => call(path, { method, headers: { ...auth, ...json }, body: method === 'POST' ? '{}' : undefined });
  const bearerJson = async <T>(call: Call, method: string, path: string): Promise<T> => {
    const res = await bearer(call, method, path);
    expect([method, path, res.status]).toEqual([method, path, 200]);
    return (await res.json()) as T;
  };
  const refused = async (call: Call, method: string, path: string, status: number, name: string) => {
    const res = await bearer(call, method, path);
    const body = (await res.json()) as ErrorReply;
    expect([method, path, res.status, body.error.name]).toEqual([method, path, status, name]);
    return body.error.message;
  };

  it('every flows route needs the auth; the cancel with a cookie session needs the CSRF header', async () => {
    const { call, flows } = await dashboard('dflow-auth');
    const { id } = await flows.submitFlow([{ ref: 'later', type: 'df.work', payload: {}, delay: HOUR }, { ref: 'after', type: 'df.work', payload: {}, dependsOn: ['later'] }]);
    for (const [method, path] of [['GET', '/api/flows'], ['GET', `/api/flows/${id}`], ['POST', `/api/flows/${id}/cancel`]]) {
      for (const headers of [{}, { authorization: 'Bearer wrong' }] as Record<string, string>[]) {
        const res = await call(path, { method, headers: { ...json, ...headers }, body: method === 'POST' ? '{}' : undefined });
        expect([method, path, res.status]).toEqual([method, path, 401]);
      }
    }
    const { cookie, csrf } = await signIn(call);
    for (const header of [{}, { 'x-csrf-token': 'forged' }] as Record<string, string>[]) {
      const res = await call(`/api/flows/${id}/cancel`, { method: 'POST', headers: { ...json, cookie, ...header }, body: '{}' });
      expect([res.status, ((await res.json()) as ErrorReply).error.name]).toEqual([403, 'ForbiddenException']);
    }
    expect((await flows.getFlow(id))?.state).toBe('running');
    const read = await call(`/api/flows/${id}`, { headers: { cookie } });
    expect([read.status, ((await read.json()) as DashboardFlow).state]).toEqual([200, 'running']);
    const allowed = await call(`/api/flows/${id}/cancel`, { method: 'POST', headers: { ...json, cookie, 'x-csrf-token': csrf }, body: '{}' });
    expect([allowed.status, await allowed.json()]).toEqual([200, { cancelled: 2, cancelRequested: 0 }]);
    expect((await flows.getFlow(id))?.state).toBe('cancelled');
  });

  it('lists the newest flows first, by pages, as the flows service does', async () => {
    const { call, flows } = await dashboard('dflow-list');
    const ids = ['f-1', 'f-2', 'f-3'];
    for (const id of ids) {
      await flows.submitFlow([{ ref: 'a', type: 'df.work', payload: {}, delay: HOUR }], { id });
      await new Promise((r) => setTimeout(r, 5));
    }
    const all = await bearerJson<DashboardFlowPage>(call, 'GET', '/api/flows');
    expect({ ...all, flows: all.flows.map((f) => f.id) }).toEqual({ offset: 0, limit: 50, more: false, flows: ['f-3', 'f-2', 'f-1'] });
    expect(all.flows).toEqual(JSON.parse(JSON.stringify(await flows.listFlows(0, 50))));
    expect(all.flows[0]).toEqual({ id: 'f-3', state: 'running', createdAt: expect.any(Number), counts: { total: 1, completed: 0, dead: 0, cancelled: 0, blocked: 0 } });
    const first = await bearerJson<DashboardFlowPage>(call, 'GET', '/api/flows?limit=2');
    expect([first.more, first.flows.map((f) => f.id)]).toEqual([true, ['f-3', 'f-2']]);
    const second = await bearerJson<DashboardFlowPage>(call, 'GET', '/api/flows?offset=2&limit=2');
    expect([second.more, second.flows.map((f) => f.id)]).toEqual([false, ['f-1']]);
    expect(await bearerJson<DashboardFlowPage>(call, 'GET', '/api/flows?offset=9')).toEqual({ offset: 9, limit: 50, more: false, flows: [] });
    for (const [query, field] of [['offset=-1', 'offset'], ['offset=1.5', 'offset'], ['offset=abc', 'offset'], ['limit=0', 'limit'], ['limit=201', 'limit'], ['limit=ten', 'limit']]) {
      const message = await refused(call, 'GET', `/api/flows?${query}`, 400, 'InvalidArgumentError');
      expect([query, message]).toEqual([query, expect.stringMatching(new RegExp(`^Invalid argument "${field}"`))]);
    }
  });

  it('reads one flow with every node as getFlow does; a big result is sent as its size', async () => {
    const { call, flows } = await dashboard('dflow-get');
    const big = 'x'.repeat(2000);
    const { id } = await flows.submitFlow([
      { ref: 'small', type: 'df.work', payload: { out: { n: 1 } } },
      { ref: 'big', type: 'df.work', payload: { out: big } },
      { ref: 'bad', type: 'df.work', payload: { fail: true }, onFailure: 'continue' },
      { ref: 'after', type: 'df.work', payload: {}, dependsOn: ['small', 'big'] },
      { ref: 'never', type: 'df.work', payload: {}, dependsOn: ['bad'] },
    ], { id: 'read.me' });
    const ended = await flowEnded(flows, id, 30_000);
    const read = await bearerJson<DashboardFlow>(call, 'GET', '/api/flows/read.me');
    const { result: _big, ...bigNode } = ended.nodes.find((n) => n.ref === 'big')!;
    expect(read).toEqual(JSON.parse(JSON.stringify({ ...ended, nodes: ended.nodes.map((n) => (n.ref === 'big' ? { ...bigNode, resultBytes: 2002 } : n)) })));
    expect(read.nodes.map((n) => [n.ref, n.state]).sort()).toEqual([['after', 'completed'], ['bad', 'dead'], ['big', 'completed'], ['never', 'blocked'], ['small', 'completed']]);
    expect(read.nodes.find((n) => n.ref === 'small')).toMatchObject({ result: { n: 1 }, id: '&read.me:small', type: 'df.work' });
    expect(read.nodes.find((n) => n.ref === 'bad')?.error).toMatchObject({ name: 'RangeError', message: 'no luck' });
  });

  it('an unknown flow is a 404, a bad id a 400, and nothing is written', async () => {
    const { call, flows } = await dashboard('dflow-bad');
    const { id } = await flows.submitFlow([{ ref: 'a', type: 'df.work', payload: {}, delay: HOUR }], { id: 'kept' });
    for (const method of ['GET', 'POST']) {
      const path = method === 'GET' ? '/api/flows/nope' : '/api/flows/nope/cancel';
      expect(await refused(call, method, path, 404, 'NotFoundException')).toMatch(/no flow "nope"/);
      for (const bad of ['a b', '&kept', 'kept:a', 'x'.repeat(65), 'é']) {
        const encoded = `/api/flows/${encodeURIComponent(bad)}${method === 'POST' ? '/cancel' : ''}`;
        await refused(call, method, encoded, 400, 'InvalidFlowError');
      }
    }
    expect((await flows.getFlow(id))?.state).toBe('running');
    expect((await flows.listFlows()).map((f) => f.id)).toEqual(['kept']);
  });

  it('cancels what has not run, aborts a running node; a repeat cancels nothing', async () => {
    const runs: NodeRun[] = [];
    const { call, flows } = await dashboard('dflow-cancel', runs);
    const { id } = await flows.submitFlow([
      { ref: 'running', type: 'df.slow', payload: {} },
      { ref: 'waiting', type: 'df.work', payload: {}, delay: HOUR },
      { ref: 'parked', type: 'df.work', payload: {}, dependsOn: ['running', 'waiting'] },
    ]);
    await waitFor(async () => runs.some((r) => r.ref === 'running'), { timeoutMs: 15_000, message: 'the slow node started' });
    expect(await bearerJson<FlowCancelResult>(call, 'POST', `/api/flows/${id}/cancel`)).toEqual({ cancelled: 2, cancelRequested: 1 });
    const ended = await flowEnded(flows, id, 20_000);
    expect(ended.state).toBe('cancelled');
    await waitFor(async () => runs.find((r) => r.ref === 'running')?.end !== null, { timeoutMs: 15_000, message: 'the slow node aborted' });
    expect(runs.map((r) => r.ref)).toEqual(['running']);
    expect(await bearerJson<FlowCancelResult>(call, 'POST', `/api/flows/${id}/cancel`)).toEqual({ cancelled: 0, cancelRequested: 0 });
    expect((await bearerJson<DashboardFlow>(call, 'GET', `/api/flows/${id}`)).state).toBe('cancelled');
  });
});
