import { Logger } from '@nestjs/common';
import { createHash } from 'crypto';
import { TaskInspectorService } from 'nestjs-distributed-queue';
import { killAllChildren, spawnChild } from './support/child';
import { signIn, TOKEN, useDashboards } from './support/dashboard';
import { connect, keysOf, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

/*
 * Failure matrix of the dashboard (docs/failure-matrix.md, section 2), the cells not about Redis outages:
 *  - replicas: two operators acting on the same task at once from two instances (cancel, re-drive, delete;
 *    many rounds): exactly one succeeds, the other is told nothing was done (run now: idempotent, at least
 *    one ok); each task runs once;
 *  - crash between batches of "re-drive all": an instance SIGKILLed right after its first 1,000-task batch
 *    of 5,000 dead letters; the moved ones run once, the rest stay dead and are re-driven by another one;
 *    and of "delete all" (3,000): the first batch is gone, the rest stay dead and are deleted again;
 *  - the session cookie's attributes and what Redis holds of it (README); a crash between the session's SET
 *    and the answer that carries its cookie (the orphan key expires with the session's lifetime);
 *  - long values: a type of 200 and an id of 256 characters (the longest allowed) in URL paths; longer
 *    ones, and an over-long query, get a typed 4xx;
 *  - single server and cluster (both targets).
 */

const auth = { authorization: `Bearer ${TOKEN}` };
const json = { 'content-type': 'application/json', ...auth };

describe.each(getTargets().map((t) => [t.name, t] as const))('dashboard matrix on %s', (_name, target: RedisTarget) => {
  const { start } = useDashboards();
  afterEach(() => killAllChildren());

  it('two operators acting on the same task at once: exactly one succeeds each round, and each task runs once', async () => {
    const prefix = uniquePrefix('dash-race');
    const runs = new Map<string, number>();
    let failing = true;
    const W = workerClass('race', { maxAttempts: 1 }, (task) => {
      runs.set(task.id, (runs.get(task.id) ?? 0) + 1);
      if (failing) throw new Error('dead on purpose');
    });
    const one = await start({ connection: target.connection, keyPrefix: prefix, types: { race: {} } }, { token: TOKEN }, [W]);
    const two = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { race: {} } }, { token: TOKEN }, []);
    const both = async (path: string, body: unknown = {}) => {
      const replies = await Promise.all([one, two].map((d) => d.call(path, { method: 'POST', headers: json, body: JSON.stringify(body) })));
      expect(replies.map((r) => r.status)).toEqual([200, 200]);
      return Promise.all(replies.map((r) => r.json() as Promise<any>));
    };
    const rounds = 25;
    const ids = (label: string) => Array.from({ length: rounds }, (_, i) => `${label}${i}`);

    // Cancel and run now of waiting tasks.
    await one.submit.submitMany('race', ids('c').map((id) => ({ id, payload: 0, delay: 600_000 })));
    for (const id of ids('c')) {
      const results = (await both(`/api/types/race/tasks/${id}/cancel`)).map((r) => r.result).sort();
      expect([id, results]).toEqual([id, ['cancelled', 'not-found']]);
    }
    failing = false;
    await one.submit.submitMany('race', ids('r').map((id) => ({ id, payload: 0, delay: 600_000 })));
    for (const id of ids('r')) {
      // NOTE: run now is idempotent, not exclusive: the second may still find the task waiting (now due) and
      // answer ok too; what must hold is that one does and that the task runs once.
      const oks = (await both(`/api/types/race/tasks/${id}/run-now`)).map((r) => r.ok);
      expect([id, oks.includes(true)]).toEqual([id, true]);
      await waitFor(() => runs.get(id) === 1, { timeoutMs: 10_000, message: `${id} ran` });
    }

    // Re-drive and delete of dead letters.
    failing = true;
    await one.submit.submitMany('race', [...ids('d'), ...ids('x')].map((id) => ({ id, payload: 0 })));
    await waitFor(async () => (await one.app.get(TaskInspectorService).getCounts('race')).dead === 2 * rounds, { timeoutMs: 20_000, message: 'dead letters' });
    failing = false;
    for (const id of ids('d')) {
      const counts = (await both('/api/types/race/dead/redrive', { ids: [id] })).map((r) => r.count).sort();
      expect([id, counts]).toEqual([id, [0, 1]]);
    }
    for (const id of ids('x')) {
      const counts = (await both('/api/types/race/dead/delete', { ids: [id] })).map((r) => r.count).sort();
      expect([id, counts]).toEqual([id, [0, 1]]);
    }
    await waitFor(() => ids('d').every((id) => runs.get(id) === 2), { timeoutMs: 20_000, message: 're-driven tasks ran' });
    // NOTE: a little longer, for a second run of a re-driven task to show up if one were coming.
    await sleep(500);
    expect(ids('c').filter((id) => runs.has(id))).toEqual([]);
    expect(ids('r').map((id) => runs.get(id))).toEqual(ids('r').map(() => 1));
    expect(ids('d').map((id) => runs.get(id))).toEqual(ids('d').map(() => 2));
    expect(ids('x').map((id) => runs.get(id))).toEqual(ids('x').map(() => 1));
    expect(await one.app.get(TaskInspectorService).getCounts('race')).toMatchObject({ dead: 0, ready: 0, delayed: 0, running: 0 });
  });

  it('an instance SIGKILLed after the first batch of "re-drive all" of 5,000 dead letters: the moved run once, the rest stay dead and are re-driven again', async () => {
    const prefix = uniquePrefix('dash-redrive-kill');
    const runs = new Map<string, number>();
    let failing = true;
    const W = workerClass('rd', { maxAttempts: 1, concurrency: 16 }, (task) => {
      runs.set(task.id, (runs.get(task.id) ?? 0) + 1);
      if (failing) throw new Error('dead on purpose');
    });
    const worker = await start({ connection: target.connection, keyPrefix: prefix, types: { rd: {} } }, { token: TOKEN }, [W]);
    const inspect = worker.app.get(TaskInspectorService);
    const total = 5000;
    const items = Array.from({ length: total }, (_, i) => ({ id: `d${i}`, payload: i }));
    // NOTE: thousands of deaths logged with their stacks would be megabytes of test output: not logged here.
    Logger.overrideLogger(false);
    try {
      for (let i = 0; i < total; i += 1000) await worker.submit.submitMany('rd', items.slice(i, i + 1000));
      await waitFor(async () => (await inspect.getCounts('rd')).dead === total, { timeoutMs: 60_000, intervalMs: 200, message: 'dead letters' });
    } finally {
      Logger.overrideLogger(['error']);
    }
    failing = false;
    runs.clear();

    const doomed = spawnChild('test/fixtures/dashboard-app.ts', {
      DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: 'rd', DQ_TOKEN: TOKEN, DQ_KILL_AFTER_REDRIVE_BATCHES: '1',
    });
    const { url } = await doomed.waitForMessage((m) => m.type === 'ready', 60_000);
    const call = fetch(`${url}/api/types/rd/dead/redrive`, { method: 'POST', headers: json, body: JSON.stringify({ all: true }) });
    await expect(call).rejects.toThrow();
    expect(await doomed.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(doomed.messages.filter((m) => m.type === 'batch').map((m) => m.moved)).toEqual([1000]);

    await waitFor(() => runs.size === 1000, { timeoutMs: 30_000, message: 'the moved batch ran' });
    expect((await inspect.getCounts('rd')).dead).toBe(total - 1000);
    // Again, from the instance that is up: the rest, once.
    const res = await worker.call('/api/types/rd/dead/redrive', { method: 'POST', headers: json, body: JSON.stringify({ all: true }) });
    expect(await res.json()).toEqual({ count: total - 1000 });
    await waitFor(() => runs.size === total, { timeoutMs: 60_000, intervalMs: 100, message: 'every task ran' });
    await sleep(300);
    expect([...runs.values()].filter((n) => n !== 1)).toEqual([]);
    expect(await inspect.getCounts('rd')).toMatchObject({ dead: 0, ready: 0, delayed: 0, running: 0 });
  });

  it('the session cookie is HttpOnly, SameSite=Strict, never the token; Redis holds only the SHA-256 of its value', async () => {
    const prefix = uniquePrefix('dash-cookie');
    const ttlMs = 3_600_000;
    const { call } = await start({ connection: target.connection, keyPrefix: prefix, types: { t: {} } }, { token: TOKEN, sessionTtlMs: ttlMs }, []);
    const res = await call(`/login?token=${TOKEN}`);
    expect(res.status).toBe(303);
    const session = res.headers.getSetCookie().find((c) => c.startsWith('dq_dash='))!;
    const attributes = session.split(';').map((s) => s.trim());
    const value = decodeURIComponent(attributes[0].slice('dq_dash='.length));
    expect(attributes.slice(1).sort()).toEqual(['HttpOnly', 'Max-Age=3600', 'Path=/queues', 'SameSite=Strict']);
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(session).not.toContain(TOKEN);
    expect(session).not.toContain(encodeURIComponent(TOKEN));
    // A second sign-in: a new id.
    const again = await signIn(call);
    expect(again.session).not.toBe(value);

    const redis = connect(target);
    try {
      const key = `${prefix}:{${prefix}:__dashboard__}:session:${createHash('sha256').update(value).digest('hex')}`;
      expect(await redis.exists(key)).toBe(1);
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(ttlMs - 60_000);
      expect(ttl).toBeLessThanOrEqual(ttlMs);
      // Neither the id nor the token is anywhere in Redis: not in a key's name, not in a value.
      const nodes = 'nodes' in redis ? redis.nodes('master') : [redis];
      const keys = (await Promise.all(nodes.map((n) => n.keys(`${prefix}:*`)))).flat();
      expect(keys.filter((k) => k.includes('session:'))).toHaveLength(2);
      for (const k of keys) {
        expect(k).not.toContain(value);
        if ((await redis.type(k)) !== 'string') continue;
        const stored = (await redis.get(k)) ?? '';
        expect(stored).not.toContain(value);
        expect(stored).not.toContain(TOKEN);
      }
      // The cookie works, and its hash does not.
      expect((await call('/api/overview', { headers: { cookie: `dq_dash=${value}` } })).status).toBe(200);
      expect((await call('/api/overview', { headers: { cookie: `dq_dash=${key.split('session:')[1]}` } })).status).toBe(401);
    } finally {
      redis.disconnect();
    }
  });
  it('serves a type of 200 and an id of 256 characters in URL paths; longer ones and over-long queries get a short typed 4xx', async () => {
    const type = 't'.repeat(200);
    const id = 'i'.repeat(256);
    const { call, submit } = await start({ connection: target.connection, keyPrefix: uniquePrefix('dash-long'), types: { [type]: {} } }, { token: TOKEN }, []);
    await submit.submitMany(type, [id, `${id.slice(1)}2`].map((taskId) => ({ id: taskId, payload: 1, delay: 600_000 })));
    const get = (path: string) => call(path, { headers: auth });
    const post = (path: string, body: unknown = {}) => call(path, { method: 'POST', headers: json, body: JSON.stringify(body) });

    const detail = await get(`/api/types/${type}/tasks/${id}`);
    expect([detail.status, await detail.json()]).toEqual([200, expect.objectContaining({ id, type, state: 'delayed' })]);
    const page = (await (await get(`/api/types/${type}/tasks?state=delayed&limit=1`)).json()) as { tasks: { id: string }[]; next: string };
    expect(page.tasks).toHaveLength(1);
    const next = (await (await get(`/api/types/${type}/tasks?state=delayed&limit=1&cursor=${encodeURIComponent(page.next)}`)).json()) as { tasks: { id: string }[] };
    expect([...page.tasks, ...next.tasks].map((t) => t.id).sort()).toEqual([`${id.slice(1)}2`, id].sort());
    const found = (await (await get(`/api/types/${type}/tasks?id=${id}`)).json()) as { tasks: { id: string }[] };
    expect(found.tasks.map((t) => t.id)).toEqual([id]);
    expect(await (await post(`/api/types/${type}/tasks/${id}/reschedule`, { delayMs: 700_000 })).json()).toEqual({ ok: true });
    expect(await (await post(`/api/types/${type}/tasks/${id}/cancel`)).json()).toEqual({ result: 'cancelled' });

    const long = 'y'.repeat(8000);
    const refusals: [string, Promise<Response>, number, string][] = [
      ['type of 201', get(`/api/types/${type}x/tasks`), 404, 'UnknownTaskTypeError'],
      ['type of 8,000', get(`/api/types/${long}/tasks`), 404, 'UnknownTaskTypeError'],
      ['action on a type of 8,000', post(`/api/types/${long}/pause`), 404, 'UnknownTaskTypeError'],
      ['id of 257', get(`/api/types/${type}/tasks/${id}x`), 400, 'InvalidSubmitOptionsError'],
      ['id of 8,000', get(`/api/types/${type}/tasks/${long}`), 400, 'InvalidSubmitOptionsError'],
      ['cancel of an id of 8,000', post(`/api/types/${type}/tasks/${long}/cancel`), 400, 'InvalidSubmitOptionsError'],
      ['search of 8,000', get(`/api/types/${type}/tasks?id=${long}`), 400, 'InvalidSubmitOptionsError'],
      ['cursor of 8,000', get(`/api/types/${type}/tasks?state=delayed&cursor=${long}`), 400, 'InvalidArgumentError'],
      ['state of 8,000', get(`/api/types/${type}/tasks?state=${long}`), 400, 'InvalidArgumentError'],
      ['limit of 8,000 digits', get(`/api/types/${type}/tasks?state=delayed&limit=${'9'.repeat(8000)}`), 400, 'InvalidArgumentError'],
    ];
    for (const [label, reply, status, name] of refusals) {
      const res = await reply;
      const text = await res.text();
      expect([label, res.status, (JSON.parse(text) as { error: { name: string } }).error.name]).toEqual([label, status, name]);
      // Long values are quoted as a prefix with their length: the answer stays a line, whatever was sent.
      expect([label, text.length < 600]).toEqual([label, true]);
      expect([label, text]).toEqual([label, expect.stringMatching(/\(\d+ characters\)/)]);
    }
    // Past Node's limit on a request's head (16 KiB by default), Node itself answers 431, before any route.
    const huge = 'z'.repeat(20_000);
    expect((await get(`/api/types/${type}/tasks?state=delayed&x=${huge}`)).status).toBe(431);
    expect((await get(`/api/types/${huge}/tasks`)).status).toBe(431);
  });
  it('an instance SIGKILLed between storing a session and sending its cookie: the browser has no cookie, the orphan key expires', async () => {
    const prefix = uniquePrefix('dash-signin-kill');
    const ttlMs = 2000;
    const doomed = spawnChild('test/fixtures/dashboard-app.ts', {
      DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: 't', DQ_TOKEN: TOKEN, DQ_KILL_AFTER_SIGN_IN: '1', DQ_SESSION_TTL_MS: String(ttlMs),
    });
    const { url } = await doomed.waitForMessage((m) => m.type === 'ready', 60_000);
    await expect(fetch(`${url}/login?token=${TOKEN}`, { redirect: 'manual' })).rejects.toThrow();
    expect(await doomed.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const { id } = doomed.messages.find((m) => m.type === 'session');
    const other = await start({ connection: target.connection, keyPrefix: prefix, types: { t: {} } }, { token: TOKEN, sessionTtlMs: ttlMs }, []);
    const redis = connect(target);
    try {
      const key = `${prefix}:{${prefix}:__dashboard__}:session:${createHash('sha256').update(id).digest('hex')}`;
      const ttl = await redis.pttl(key);
      // The orphan lives at most the session's lifetime (-2: already gone, on a slow machine).
      expect(ttl === -2 || (ttl > 0 && ttl <= ttlMs)).toBe(true);
      await waitFor(async () => (await redis.exists(key)) === 0, { timeoutMs: ttlMs + 5000, message: 'the orphan session expired' });
      expect((await other.call('/api/overview', { headers: { cookie: `dq_dash=${id}` } })).status).toBe(401);
      // Signing in again, on the instance that is up, works.
      const again = await signIn(other.call);
      expect((await other.call('/api/overview', { headers: { cookie: again.cookie } })).status).toBe(200);
    } finally {
      redis.disconnect();
    }
  });
  it('an instance SIGKILLed after the first batch of "delete all" of 3,000 dead letters: that batch is gone, the rest stay dead and are deleted again', async () => {
    const prefix = uniquePrefix('dash-delete-kill');
    let runs = 0;
    const W = workerClass('dd', { maxAttempts: 1, concurrency: 16 }, () => {
      runs++;
      throw new Error('dead on purpose');
    });
    const worker = await start({ connection: target.connection, keyPrefix: prefix, types: { dd: {} } }, { token: TOKEN }, [W]);
    const inspect = worker.app.get(TaskInspectorService);
    const total = 3000;
    const items = Array.from({ length: total }, (_, i) => ({ id: `d${i}`, payload: i }));
    // NOTE: thousands of deaths logged with their stacks would be megabytes of test output: not logged here.
    Logger.overrideLogger(false);
    try {
      for (let i = 0; i < total; i += 1000) await worker.submit.submitMany('dd', items.slice(i, i + 1000));
      await waitFor(async () => (await inspect.getCounts('dd')).dead === total, { timeoutMs: 60_000, intervalMs: 200, message: 'dead letters' });
    } finally {
      Logger.overrideLogger(['error']);
    }

    const doomed = spawnChild('test/fixtures/dashboard-app.ts', {
      DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: 'dd', DQ_TOKEN: TOKEN, DQ_KILL_AFTER_DELETE_BATCHES: '1',
    });
    const { url } = await doomed.waitForMessage((m) => m.type === 'ready', 60_000);
    await expect(fetch(`${url}/api/types/dd/dead/delete`, { method: 'POST', headers: json, body: JSON.stringify({ all: true }) })).rejects.toThrow();
    expect(await doomed.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(doomed.messages.filter((m) => m.type === 'deleted').map((m) => m.deleted)).toEqual([1000]);
    expect((await inspect.getCounts('dd')).dead).toBe(total - 1000);
    const redis = connect(target);
    try {
      expect(await redis.hlen(keysOf(prefix, 'dd').errors)).toBe(total - 1000);
    } finally {
      redis.disconnect();
    }
    const res = await worker.call('/api/types/dd/dead/delete', { method: 'POST', headers: json, body: JSON.stringify({ all: true }) });
    expect(await res.json()).toEqual({ count: total - 1000 });
    expect(await inspect.getCounts('dd')).toMatchObject({ dead: 0, ready: 0, delayed: 0, running: 0 });
    // Deleted for good: nothing ran again, and no error of theirs is left behind.
    expect(runs).toBe(total);
    const after = connect(target);
    try {
      expect(await after.exists(keysOf(prefix, 'dd').errors)).toBe(0);
    } finally {
      after.disconnect();
    }
  });
});
