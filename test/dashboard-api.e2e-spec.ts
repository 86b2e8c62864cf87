import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { DistributedQueueDashboardModule, InvalidOptionsError, type Task } from 'nestjs-distributed-queue';
import { hostname } from 'os';
import { signIn, TOKEN, useDashboards } from './support/dashboard';
import { untilAborted, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { waitFor } from './support/wait';

const json = { 'content-type': 'application/json' };

describe.each(getTargets().map((t) => [t.name, t] as const))('dashboard admin API on %s', (_name, target: RedisTarget) => {
  const { start } = useDashboards();

  it('answers 401 to everything without the token, and to a wrong one; the page and API with it', async () => {
    const { call } = await start({ connection: target.connection, keyPrefix: uniquePrefix('dash-auth'), types: { t: {} }, workers: false }, { token: TOKEN }, []);
    for (const path of ['/', '/api/overview', '/assets/app.js', '/api/types/t/tasks']) expect((await call(path)).status).toBe(401);
    expect((await call('/api/types/t/pause', { method: 'POST' })).status).toBe(401);
    expect((await call('/login?token=wrong-token-of-some-length')).status).toBe(401);
    expect((await call('/api/overview', { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const body = (await (await call('/api/overview')).json()) as { error: { name: string } };
    expect(body.error.name).toBe('UnauthorizedException');

    const { cookie } = await signIn(call);
    const page = await call('/', { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('src="/queues/assets/app.js"');
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/);
    expect((await call('/api/overview', { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it('without a token or guard configured, every request gets 401', async () => {
    const { call } = await start({ connection: target.connection, keyPrefix: uniquePrefix('dash-none'), types: { t: {} }, workers: false }, {}, []);
    for (const path of ['/', '/api/overview', `/login?token=${TOKEN}`]) expect((await call(path)).status).toBe(401);
  });

  it('overview counts, listings and task detail follow the queue; bad input is a typed 400/404', async () => {
    const prefix = uniquePrefix('dash-view');
    const { call, submit } = await start({ connection: target.connection, keyPrefix: prefix, types: { mail: {} }, workers: false }, { token: TOKEN }, []);
    const auth = { authorization: `Bearer ${TOKEN}` };
    await submit.submitMany('mail', [1, 2, 3].map((i) => ({ id: `m${i}`, payload: { i, html: '<script>alert(1)</script>' }, delay: 60_000 })));
    await submit.submit('mail', { now: true }, { id: 'ready1' });
    const overview = (await (await call('/api/overview', { headers: auth })).json()) as { types: { type: string; counts: { delayed: number; ready: number }; paused: boolean }[] };
    expect(overview.types).toEqual([expect.objectContaining({ type: 'mail', paused: false, counts: expect.objectContaining({ delayed: 3, ready: 1 }) })]);
    type Page = { total: number; cursor: string | null; next: string | null; tasks: { id: string }[] };
    const page = (await (await call('/api/types/mail/tasks?state=delayed&limit=2', { headers: auth })).json()) as Page;
    expect(page.total).toBe(3);
    expect(page.tasks.map((t) => t.id)).toEqual(['m1', 'm2']);
    // pages go by cursor: the next page starts after the last task shown; the last page has no next
    expect(page.cursor).toBeNull();
    const second = (await (await call(`/api/types/mail/tasks?state=delayed&limit=2&cursor=${encodeURIComponent(page.next!)}`, { headers: auth })).json()) as Page;
    expect([second.cursor, second.next, second.tasks.map((t) => t.id)]).toEqual([page.next, null, ['m3']]);
    for (const query of ['state=delayed&offset=2', 'state=delayed&cursor=nonsense', `state=ready&cursor=${encodeURIComponent(page.next!)}`]) {
      const refused = await call(`/api/types/mail/tasks?${query}`, { headers: auth });
      expect([query, refused.status, ((await refused.json()) as { error: { name: string } }).error.name]).toEqual([query, 400, 'InvalidArgumentError']);
    }
    const found = (await (await call('/api/types/mail/tasks?id=m3', { headers: auth })).json()) as { tasks: { id: string; payload: unknown }[] };
    expect(found.tasks).toEqual([expect.objectContaining({ id: 'm3', payload: { i: 3, html: '<script>alert(1)</script>' } })]);
    const detail = await call('/api/types/mail/tasks/m2', { headers: auth });
    expect(detail.headers.get('content-type')).toContain('application/json');
    expect(await detail.json()).toMatchObject({ id: 'm2', state: 'delayed', attempts: 0 });
    const missing = await call('/api/types/mail/tasks/nope', { headers: auth });
    expect(missing.status).toBe(404);
    const unknown = await call('/api/types/other/tasks', { headers: auth });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { name: string } }).error.name).toBe('UnknownTaskTypeError');
    const bad = await call('/api/types/mail/tasks?state=sleeping', { headers: auth });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { name: string } }).error.name).toBe('InvalidArgumentError');
  });

  it('actions need the CSRF header with a cookie session; run now, cancel, re-drive, delete, pause', async () => {
    const prefix = uniquePrefix('dash-act');
    const runs: string[] = [];
    const Worker = workerClass('job', { concurrency: 4, maxAttempts: 1, pollIntervalMs: 100 }, (task: Task<{ fail?: boolean }>) => {
      runs.push(`${task.id}:${task.attempt}`);
      if (task.payload.fail && task.attempt === 1 && !runs.includes(`${task.id}:redriven`)) throw new Error('first run fails');
    });
    const { call, submit } = await start({ connection: target.connection, keyPrefix: prefix }, { token: TOKEN }, [Worker]);
    const { cookie, csrf } = await signIn(call);
    const post = (path: string, body?: unknown, csrfHeader: string | null = csrf) =>
      call(path, { method: 'POST', headers: { cookie, ...json, ...(csrfHeader ? { 'x-csrf-token': csrfHeader } : {}) }, body: JSON.stringify(body ?? {}) });

    await submit.submit('job', {}, { id: 'later', delay: 60_000 });
    expect((await post('/api/types/job/tasks/later/run-now', {}, null)).status).toBe(403);
    expect((await post('/api/types/job/tasks/later/run-now', {}, 'forged')).status).toBe(403);
    const ran = await post('/api/types/job/tasks/later/run-now');
    expect(ran.status).toBe(200);
    expect(await ran.json()).toEqual({ ok: true });
    await waitFor(() => runs.includes('later:1'), { timeoutMs: 5000, message: 'run now ran it' });

    await submit.submit('job', {}, { id: 'gone', delay: 60_000 });
    expect(await (await post('/api/types/job/tasks/gone/cancel')).json()).toEqual({ result: 'cancelled' });
    expect(await (await post('/api/types/job/tasks/gone/reschedule', { delayMs: 1000 })).json()).toEqual({ ok: false });

    await submit.submitMany('job', [{ id: 'd1', payload: { fail: true } }, { id: 'd2', payload: { fail: true } }]);
    await waitFor(async () => ((await (await call('/api/types/job/tasks?state=dead', { headers: { cookie } })).json()) as { total: number }).total === 2, {
      timeoutMs: 5000, message: 'two dead letters',
    });
    runs.push('d1:redriven');
    expect(await (await post('/api/types/job/dead/redrive', { ids: ['d1'] })).json()).toEqual({ count: 1 });
    await waitFor(() => runs.filter((r) => r === 'd1:1').length === 2, { timeoutMs: 5000, message: 're-driven d1 ran again' });
    expect((await post('/api/types/job/dead/delete', { ids: 'd2' })).status).toBe(400);
    expect(await (await post('/api/types/job/dead/delete', { all: true })).json()).toEqual({ count: 1 });

    expect(await (await post('/api/types/job/pause')).json()).toEqual({ paused: true });
    await submit.submit('job', {}, { id: 'held' });
    await new Promise((r) => setTimeout(r, 400));
    expect(runs).not.toContain('held:1');
    expect(await (await post('/api/types/job/resume')).json()).toEqual({ paused: false });
    await waitFor(() => runs.includes('held:1'), { timeoutMs: 5000, message: 'resumed' });

    // A Bearer client needs no CSRF header: no ambient credential can be forged cross-site.
    const bearer = await call('/api/types/job/pause', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(bearer.status).toBe(200);
  });

  it("a running task's detail names its lease holder and expiry", async () => {
    const Worker = workerClass('hold', { visibilityTimeoutMs: 5000 }, (_task: Task, signal: AbortSignal) => untilAborted(signal));
    const { call, submit } = await start({ connection: target.connection, keyPrefix: uniquePrefix('dash-lease'), shutdownTimeoutMs: 100 }, { token: TOKEN }, [Worker]);
    await submit.submit('hold', {}, { id: 'h1' });
    const auth = { authorization: `Bearer ${TOKEN}` };
    const detail = await waitFor(async () => {
      const body = (await (await call('/api/types/hold/tasks/h1', { headers: auth })).json()) as { state: string; leaseHolder?: string; leaseExpiresAt?: number };
      return body.state === 'running' ? body : null;
    }, { timeoutMs: 5000, message: 'h1 running' });
    expect(detail.leaseHolder).toBe(`${hostname()}/${process.pid}`);
    expect(detail.leaseExpiresAt).toBeGreaterThan(Date.now() + 3000);
  });

  it("an application's guard decides instead of the token", async () => {
    @Injectable()
    class AdminOnly implements CanActivate {
      canActivate(context: ExecutionContext): boolean {
        return context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-role'] === 'admin';
      }
    }
    const { call } = await start({ connection: target.connection, keyPrefix: uniquePrefix('dash-guard'), types: { t: {} }, workers: false }, { guard: AdminOnly }, []);
    expect((await call('/api/overview')).status).toBe(401);
    expect((await call('/api/overview', { headers: { 'x-role': 'admin' } })).status).toBe(200);
    expect((await call('/api/types/t/pause', { method: 'POST', headers: { 'x-role': 'admin' } })).status).toBe(403);
  });

  it("re-drives all of an ordered type's dead letters, more than one batch (1,000) of one partition", async () => {
    let failing = true;
    const runs: number[] = [];
    const Worker = workerClass<{ i: number }>('acct', { ordered: true, maxAttempts: 1 }, (task) => {
      if (failing) throw new Error('not yet');
      runs.push(task.payload.i);
    });
    const keyPrefix = uniquePrefix('dash-redrive-o');
    const { call, submit } = await start({ connection: target.connection, keyPrefix, route: routeTestOptions(keyPrefix, 'm1', 2) }, { token: TOKEN }, [Worker]);
    const n = 1100;
    await submit.submitOrderedMany('acct', Array.from({ length: n }, (_, i) => ({ key: 'one', payload: { i } })));
    const dead = async () => ((await (await call('/api/route', { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { partitions: { dead: number }[] }).partitions.reduce((a, p) => a + p.dead, 0);
    await waitFor(async () => (await dead()) === n, { timeoutMs: 30_000, message: `${n} dead letters` });
    failing = false;
    const res = await call('/api/types/acct/dead/redrive', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, ...json }, body: JSON.stringify({ all: true }) });
    expect([res.status, await res.json()]).toEqual([200, { count: n }]);
    await waitFor(() => runs.length === n, { timeoutMs: 30_000, message: 'every re-driven letter ran' });
    expect(runs).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(await dead()).toBe(0);
  }, 90_000);

  it('the route view shows partitions, machines and the scheduler lock holder', async () => {
    const Worker = workerClass('acct', { ordered: true }, () => undefined);
    const route = routeTestOptions('dashq', 'm1', 4);
    const { call } = await start({ connection: target.connection, keyPrefix: uniquePrefix('dash-route'), route }, { token: TOKEN, path: '/admin/q' }, [Worker]);
    const auth = { authorization: `Bearer ${TOKEN}` };
    const status = await waitFor(async () => {
      const body = (await (await call('/api/route', { headers: auth })).json()) as { partitions: { owner: string | null }[]; lockHolder: string | null; machines: { id: string }[] };
      return body.partitions.every((p) => p.owner === 'm1') && body.lockHolder ? body : null;
    }, { timeoutMs: 10_000, message: 'partitions owned' });
    expect(status.partitions).toHaveLength(4);
    expect(status.lockHolder).toBe('m1');
    expect(status.machines.map((m) => m.id)).toEqual(['m1']);
  });
});

describe('dashboard options', () => {
  it('refuses bad options at start-up, naming them', () => {
    expect(() => DistributedQueueDashboardModule.forRoot({ token: 'short' })).toThrow(InvalidOptionsError);
    expect(() => DistributedQueueDashboardModule.forRoot({ token: 'short' })).toThrow(/dashboard\.token/);
    expect(() => DistributedQueueDashboardModule.forRoot({ path: 'queues' })).toThrow(/dashboard\.path/);
    expect(() => DistributedQueueDashboardModule.forRoot({ path: '/queues/' })).toThrow(/dashboard\.path/);
    expect(() => DistributedQueueDashboardModule.forRoot({ guard: 42 as never })).toThrow(/dashboard\.guard/);
    expect(() => DistributedQueueDashboardModule.forRoot({ tokn: 'x' } as never)).toThrow(/dashboard\.tokn/);
  });
});
