import { DistributedQueueDashboardModule, TaskInspectorService } from 'nestjs-distributed-queue';
import { signIn, TOKEN, useDashboards, type Call } from './support/dashboard';
import { useAclUser } from './support/acl-user';
import { workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { libraryAclRule } from './support/tls';
import { waitFor } from './support/wait';

/**
 * The dashboard's admin API as a browser meets it (issue items 5-7): security headers on every successful
 * response, strict reschedule input, server-side sessions that expire and end at sign-out on every
 * instance. Failure matrix:
 *  - bad input: every malformed reschedule body (null, '', [], true, strings, negatives, both or neither
 *    field, unknown fields, out of range): a typed 400 and the task unchanged;
 *  - several instances on one Redis (a load balancer): a session made on one works on the other, and a
 *    sign-out on one ends it on both;
 *  - time: a cookie past its lifetime is refused (short lifetime option, bounded wait);
 *  - the documented least-privilege ACL rule (README, "Production connections"): sessions and a listing
 *    walk of many steps run with it, with an empty ACL LOG;
 *  - crash between writes / replicas / server down: a session is one key written with its TTL in one
 *    command, so no partial state exists to test.
 */

const SECURITY = {
  'content-security-policy': expect.stringContaining("default-src 'self'"),
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
  'referrer-policy': 'same-origin',
};

function headersOf(res: Response): Record<string, string | null> {
  return Object.fromEntries(Object.keys(SECURITY).map((name) => [name, res.headers.get(name)]));
}

describe.each(getTargets().map((t) => [t.name, t] as const))('dashboard API security on %s', (_name, target: RedisTarget) => {
  const { start } = useDashboards();
  const auth = { authorization: `Bearer ${TOKEN}` };
  const json = { 'content-type': 'application/json', ...auth };

  it('answers every successful API request (reads with payloads, the route, each action) with the security headers and no-store', async () => {
    const Acct = workerClass('acct', { ordered: true }, () => undefined);
    const { call, submit } = await start(
      { connection: target.connection, keyPrefix: uniquePrefix('dash-headers'), route: routeTestOptions('hq', 'm1', 2), types: { mail: {} } },
      { token: TOKEN }, [Acct],
    );
    await submit.submitMany('mail', ['a', 'b', 'c', 'd'].map((id) => ({ id, payload: { secret: `payload of ${id}` }, delay: 60_000 })));
    const post = (path: string, body: unknown = {}) => call(path, { method: 'POST', headers: json, body: JSON.stringify(body) });
    const answers: [string, Response][] = [
      ['overview', await call('/api/overview', { headers: auth })],
      ['listing', await call('/api/types/mail/tasks?state=delayed', { headers: auth })],
      ['search', await call('/api/types/mail/tasks?id=a', { headers: auth })],
      ['detail', await call('/api/types/mail/tasks/a', { headers: auth })],
      ['route', await waitFor(async () => {
        const res = await call('/api/route', { headers: auth });
        return res.status === 200 ? res : null;
      }, { timeoutMs: 10_000, message: 'route status' })],
      ['run-now', await post('/api/types/mail/tasks/b/run-now')],
      ['reschedule', await post('/api/types/mail/tasks/c/reschedule', { delayMs: 120_000 })],
      ['cancel', await post('/api/types/mail/tasks/d/cancel')],
      ['redrive', await post('/api/types/mail/dead/redrive', { all: true })],
      ['delete', await post('/api/types/mail/dead/delete', { all: true })],
      ['pause', await post('/api/types/mail/pause')],
      ['resume', await post('/api/types/mail/resume')],
    ];
    const asset = await call('/assets/app.js', { headers: auth });
    expect([asset.status, asset.headers.get('cache-control'), asset.headers.get('x-content-type-options')]).toEqual([200, 'private, max-age=300', 'nosniff']);
    for (const [label, res] of answers) {
      expect([label, res.status]).toEqual([label, 200]);
      expect([label, headersOf(res)]).toEqual([label, SECURITY]);
    }
    expect(await answers[3][1].json()).toMatchObject({ payload: { secret: 'payload of a' } });
  });

  it('shows a task of the largest payload accepted (1 MB by default) whole in its detail, and lists it with the rest', async () => {
    const { call, submit } = await start({ connection: target.connection, keyPrefix: uniquePrefix('dash-big'), types: { mail: {} }, workers: false }, { token: TOKEN }, []);
    const blob = 'x'.repeat(1024 * 1024 - 64);
    await submit.submit('mail', { blob }, { id: 'big', delay: 60_000 });
    await submit.submit('mail', { blob: 'small' }, { id: 'small', delay: 120_000 });
    const detail = await call('/api/types/mail/tasks/big', { headers: auth });
    expect([detail.status, headersOf(detail)]).toEqual([200, SECURITY]);
    expect(((await detail.json()) as { payload: { blob: string } }).payload.blob).toBe(blob);
    const listing = await call('/api/types/mail/tasks?state=delayed', { headers: auth });
    expect(listing.status).toBe(200);
    expect(((await listing.json()) as { tasks: { id: string }[] }).tasks.map((t) => t.id)).toEqual(['big', 'small']);
  });

  it('answers every refusal (401 without a session, 403 without the CSRF header, 400 bad input, 404 unknown task) with the same headers', async () => {
    const { call, submit } = await start({ connection: target.connection, keyPrefix: uniquePrefix('dash-err-headers'), types: { mail: {} }, workers: false }, { token: TOKEN }, []);
    await submit.submit('mail', {}, { id: 'm1', delay: 60_000 });
    const { cookie } = await signIn(call);
    const answers: [string, number, Response][] = [
      ['no session', 401, await call('/api/overview')],
      ['no csrf', 403, await call('/api/types/mail/tasks/m1/cancel', { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: '{}' })],
      ['bad state', 400, await call('/api/types/mail/tasks?state=nope', { headers: auth })],
      ['bad reschedule', 400, await call('/api/types/mail/tasks/m1/reschedule', { method: 'POST', headers: json, body: '{"delayMs":null}' })],
      ['unknown task', 404, await call('/api/types/mail/tasks/nope', { headers: auth })],
    ];
    for (const [label, status, res] of answers) {
      expect([label, res.status]).toEqual([label, status]);
      expect([label, headersOf(res)]).toEqual([label, SECURITY]);
    }
  });

  it('refuses every malformed reschedule body with a typed 400 and leaves the task as it was', async () => {
    const { app, call, submit } = await start({ connection: target.connection, keyPrefix: uniquePrefix('dash-resched'), types: { mail: {} }, workers: false }, { token: TOKEN }, []);
    const inspect = app.get(TaskInspectorService);
    await submit.submit('mail', { n: 1 }, { id: 'm', delay: 60_000 });
    const before = await inspect.getTask('mail', 'm');
    const reschedule = (body: string) => call('/api/types/mail/tasks/m/reschedule', { method: 'POST', headers: json, body });
    const bad: unknown[] = [
      { delayMs: null }, { delayMs: '' }, { delayMs: [] }, { delayMs: true }, { delayMs: '1000' }, { delayMs: {} }, { delayMs: -1 }, { delayMs: 1e20 },
      { runAt: null }, { runAt: '' }, { runAt: [] }, { runAt: true }, { runAt: '2030-01-01T00:00:00Z' }, { runAt: String(Date.now() + 5000) }, { runAt: -5 }, { runAt: 9e15 },
      {}, { delayMs: 1000, runAt: Date.now() + 1000 }, { delay: 1000 }, { delayMs: 1000, extra: 1 }, [], [{ delayMs: 1000 }],
    ];
    for (const body of bad) {
      const res = await reschedule(JSON.stringify(body));
      const { error } = (await res.json()) as { error?: { name: string } };
      expect([body, res.status, error?.name]).toEqual([body, 400, expect.stringMatching(/^Invalid(SubmitOptions|Argument)Error$/)]);
      expect(await inspect.getTask('mail', 'm')).toEqual(before);
    }
    // JSON that is no object: the application's body parser (strict JSON) refuses it before the dashboard sees it
    for (const body of ['null', '"x"', '5', 'true']) {
      const res = await reschedule(body);
      expect([body, res.status]).toEqual([body, 400]);
      expect(await inspect.getTask('mail', 'm')).toEqual(before);
    }
    // good bodies still move it, by delay and by an absolute time
    expect(await (await reschedule(JSON.stringify({ delayMs: 120_000 }))).json()).toEqual({ ok: true });
    expect((await inspect.getTask('mail', 'm')).dueAt).toBeGreaterThan(before.dueAt! + 30_000);
    const at = Date.now() + 300_000;
    expect(await (await reschedule(JSON.stringify({ runAt: at }))).json()).toEqual({ ok: true });
    expect((await inspect.getTask('mail', 'm')).dueAt).toBe(at);
  });

  it('gives each sign-in its own session, which the server refuses once its lifetime has passed', async () => {
    const LIFETIME_MS = 1500;
    const { call } = await start({ connection: target.connection, keyPrefix: uniquePrefix('dash-ttl'), types: { t: {} }, workers: false }, { token: TOKEN, sessionTtlMs: LIFETIME_MS }, []);
    const signedAt = Date.now();
    const a = await signIn(call);
    const b = await signIn(call);
    expect(a.session).not.toBe(b.session);
    const status = async (cookie: string) => (await call('/api/overview', { headers: { cookie } })).status;
    expect(await status(a.cookie)).toBe(200);
    expect(await status(b.cookie)).toBe(200);
    // the cookie itself says when it ends
    const set = (await call(`/login?token=${TOKEN}`)).headers.getSetCookie().find((c) => c.startsWith('dq_dash='))!;
    expect(set).toMatch(/Max-Age=2(;|$)/);
    // sent on after its lifetime (a copied cookie, or a browser that ignores Max-Age): refused by the server
    await waitFor(async () => (await status(a.cookie)) === 401, { timeoutMs: 15_000, intervalMs: 100, message: 'the expired session refused' });
    expect(Date.now() - signedAt).toBeGreaterThanOrEqual(LIFETIME_MS - 50);
    await waitFor(async () => (await status(b.cookie)) === 401, { timeoutMs: 15_000, intervalMs: 100, message: 'the second session refused too' });
    // the token itself still signs in
    expect(await status((await signIn(call)).cookie)).toBe(200);
  });

  it('signing out ends the session on every instance sharing the Redis; other sessions go on', async () => {
    const queue = { connection: target.connection, keyPrefix: uniquePrefix('dash-out'), types: { t: {} }, workers: false };
    const one = await start(queue, { token: TOKEN }, []);
    const two = await start(queue, { token: TOKEN }, []);
    const a = await signIn(one.call);
    const b = await signIn(one.call);
    const status = async (call: Call, cookie: string) => (await call('/api/overview', { headers: { cookie } })).status;
    expect([await status(one.call, a.cookie), await status(two.call, a.cookie)]).toEqual([200, 200]);

    const logout = (call: Call, who: { cookie: string; csrf: string }, csrf = true) =>
      call('/logout', { method: 'POST', headers: { cookie: who.cookie, 'content-type': 'application/json', ...(csrf ? { 'x-csrf-token': who.csrf } : {}) }, body: '{}' });
    expect((await logout(two.call, a, false)).status).toBe(403); // a cross-site form cannot sign anyone out
    const out = await logout(two.call, a);
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie().find((c) => c.startsWith('dq_dash='))).toMatch(/Max-Age=0/);
    expect([await status(one.call, a.cookie), await status(two.call, a.cookie)]).toEqual([401, 401]);
    expect([await status(one.call, b.cookie), await status(two.call, b.cookie)]).toEqual([200, 200]);
    expect((await logout(one.call, a)).status).toBe(401);
  });

  it('a new token ends the sessions signed in with the old one (a leaked token is rotated), on every instance', async () => {
    const queue = { connection: target.connection, keyPrefix: uniquePrefix('dash-rotate'), types: { t: {} }, workers: false };
    const old = await start(queue, { token: TOKEN }, []);
    const rotated = await start(queue, { token: `${TOKEN}-rotated` }, []);
    const before = await signIn(old.call);
    const after = await signIn(rotated.call, `${TOKEN}-rotated`);
    const status = async (call: Call, cookie: string) => (await call('/api/overview', { headers: { cookie } })).status;
    expect([await status(old.call, before.cookie), await status(rotated.call, before.cookie)]).toEqual([200, 401]);
    expect([await status(old.call, after.cookie), await status(rotated.call, after.cookie)]).toEqual([401, 200]);
  });

  it('refuses a bad session lifetime at start-up', () => {
    for (const sessionTtlMs of [0, -1, 1.5, '1000', 400 * 24 * 3600 * 1000]) {
      expect(() => DistributedQueueDashboardModule.forRoot({ token: TOKEN, sessionTtlMs: sessionTtlMs as number })).toThrow(/dashboard\.sessionTtlMs/);
    }
  });
});

describe.each(getTargets().map((t) => [t.name, t] as const))('dashboard under the least-privilege ACL user on %s', (_name, target: RedisTarget) => {
  const acl = useAclUser(target, 'dq-dash');
  const { start } = useDashboards();

  it('signs in, pages by cursor over more chunks than one step reads, reschedules and signs out: no NOPERM', async () => {
    const keyPrefix = uniquePrefix('acl-dash');
    const connection = await acl.apply(libraryAclRule(keyPrefix));
    const { app, call, submit } = await start({ connection, keyPrefix, types: { mail: {} }, workers: false }, { token: TOKEN }, []);
    const N = 20_000; // 157 chunks of the waiting set: a page is read in more than one step (64 chunks a step)
    const base = Date.now() + 600_000;
    for (let i = 0; i < N; i += 1000) {
      await submit.submitMany('mail', Array.from({ length: 1000 }, (_, j) => ({ id: `m${i + j}`, payload: {}, runAt: base + (((i + j) * 7919) % N) })));
    }
    const { cookie, csrf } = await signIn(call);
    let cursor = '';
    const seen: string[] = [];
    for (let pages = 0; pages < 3; pages++) {
      const res = await call(`/api/types/mail/tasks?state=delayed&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { cookie } });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { next: string; tasks: { id: string }[] };
      seen.push(...page.tasks.map((t) => t.id));
      cursor = page.next;
    }
    // due times base + ((i * 7919) mod N) ms: the first 3,000 by due time are those with (i * 7919) mod N < 3000
    expect(new Set(seen)).toEqual(new Set(Array.from({ length: N }, (_, i) => i).filter((i) => (i * 7919) % N < 3000).map((i) => `m${i}`)));
    const post = (path: string, body: unknown) => call(path, { method: 'POST', headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post('/api/types/mail/tasks/m1/reschedule', { delayMs: 1000 })).status).toBe(200);
    expect((await post('/logout', {})).status).toBe(200);
    expect((await call('/api/overview', { headers: { cookie } })).status).toBe(401);
    expect(await acl.denied()).toEqual([]);
  });
});
