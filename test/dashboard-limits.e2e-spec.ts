/**
 * The dashboard's routes over the fleet-wide limits of delay-queue types (issue 28, item 6):
 * `GET <base>/api/types/:type/limits`, `POST .../limits/rate-limit`, `.../limits/global-concurrency`,
 * `.../limits/reset`, and the limits in the overview, against real servers (single and cluster).
 *
 * Failure matrix (what each cell covers):
 * | cell                                   | checked                                                                    |
 * | no auth / wrong token                  | 401 on every new route (GET and POST), nothing written                     |
 * | cookie session without the CSRF header | 403 on every POST, nothing written; with it 200; a Bearer client needs none |
 * | set                                    | a rate limit and a concurrency over the workers' options: Redis holds them (getLimits), the answer and the overview show them as overrides |
 * | clear (null)                           | "no limit" over the options: effective null, override null                 |
 * | reset                                  | the overrides dropped: the options' limits in force again                  |
 * | bad input of every kind                | non-object bodies, missing, unknown and extra fields, strings, fractions, zero, negative, out of range, burst over max, unknown rate fields, a form-encoded body: 400 `{ error: { name: 'InvalidArgumentError' } }` naming the field; malformed JSON: the body parser's 400 (before any route); each time the limits hash in Redis unchanged |
 * | ordered type                           | every route: 400 InvalidArgumentError naming `type` (the control service's error); no limits in its overview row |
 * | unknown type                           | 404 UnknownTaskTypeError                                                   |
 * | limitedUntil and the recent rate       | a handler's RateLimitedError shows as limitedUntil in the overview; tasks finishing show a rate above 0, which falls back to 0 after the window |
 */
import { QueueControlService, RateLimitedError, type Task } from 'nestjs-distributed-queue';
import { signIn, TOKEN, useDashboards, type Call } from './support/dashboard';
import { connect, keysOf, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { waitFor } from './support/wait';

const auth = { authorization: `Bearer ${TOKEN}` };
const json = { 'content-type': 'application/json' };

interface Limits {
  rateLimit: { configured: unknown; override?: unknown; effective: unknown };
  globalConcurrency: { configured: unknown; override?: unknown; effective: unknown };
  running: number;
  limitedUntil: number | null;
  recentPerSecond: number;
}

interface ErrorReply {
  error: { name: string; message: string };
}

describe.each(getTargets().map((t) => [t.name, t] as const))('dashboard limits API on %s', (_name, target: RedisTarget) => {
  const { start } = useDashboards();

  /** A dashboard app with one delay worker configured with limits; resolves once Redis holds them. */
  async function withLimitedWorker(label: string) {
    const prefix = uniquePrefix(label);
    const W = workerClass('lim.a', { rateLimit: { max: 50, perMs: 1000 }, globalConcurrency: 3, pollIntervalMs: 100 }, () => undefined);
    const dash = await start({ connection: target.connection, keyPrefix: prefix }, { token: TOKEN }, [W]);
    const control = dash.app.get(QueueControlService);
    await waitFor(async () => (await control.getLimits('lim.a')).globalConcurrency.configured === 3, { timeoutMs: 10_000, message: 'the options written' });
    return { ...dash, prefix, control };
  }

  const bearerPost = (call: Call, path: string, body?: unknown) =>
    call(path, { method: 'POST', headers: { ...auth, ...json }, body: body === undefined ? undefined : JSON.stringify(body) });
  const bearerGet = async (call: Call, path: string) => (await call(path, { headers: auth })).json() as Promise<Limits>;

  it('every limits route needs the auth; a POST with a cookie session needs the CSRF header', async () => {
    const { call, control } = await withLimitedWorker('dlim-auth');
    const before = await control.getLimits('lim.a');
    const posts: [string, unknown][] = [
      ['/api/types/lim.a/limits/rate-limit', { rateLimit: { max: 5, perMs: 1000 } }],
      ['/api/types/lim.a/limits/global-concurrency', { globalConcurrency: 1 }],
      ['/api/types/lim.a/limits/reset', {}],
    ];
    expect((await call('/api/types/lim.a/limits')).status).toBe(401);
    expect((await call('/api/types/lim.a/limits', { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    for (const [path, body] of posts) {
      expect([path, (await call(path, { method: 'POST', headers: json, body: JSON.stringify(body) })).status]).toEqual([path, 401]);
      expect([path, (await call(path, { method: 'POST', headers: { ...json, authorization: 'Bearer wrong' }, body: JSON.stringify(body) })).status]).toEqual([path, 401]);
    }
    const { cookie, csrf } = await signIn(call);
    for (const [path, body] of posts) {
      for (const header of [{}, { 'x-csrf-token': 'forged' }] as Record<string, string>[]) {
        const refused = await call(path, { method: 'POST', headers: { ...json, cookie, ...header }, body: JSON.stringify(body) });
        expect([path, refused.status, ((await refused.json()) as ErrorReply).error.name]).toEqual([path, 403, 'ForbiddenException']);
      }
    }
    expect(await control.getLimits('lim.a')).toEqual(before);
    const allowed = await call(posts[1][0], { method: 'POST', headers: { ...json, cookie, 'x-csrf-token': csrf }, body: JSON.stringify(posts[1][1]) });
    expect(allowed.status).toBe(200);
    expect((await control.getLimits('lim.a')).globalConcurrency.effective).toBe(1);
    expect((await call('/api/types/lim.a/limits', { headers: { cookie } })).status).toBe(200);
  });

  it('sets, clears and resets both limits: Redis holds what the answer, GET and the overview show', async () => {
    const { call, control } = await withLimitedWorker('dlim-set');
    const shown = async () => {
      const [own, overview] = await Promise.all([
        bearerGet(call, '/api/types/lim.a/limits'),
        (await call('/api/overview', { headers: auth })).json() as Promise<{ types: { type: string; limits?: Limits }[] }>,
      ]);
      const { recentPerSecond: _r, ...limits } = own;
      const { recentPerSecond: _o, ...inOverview } = overview.types.find((t) => t.type === 'lim.a')!.limits!;
      expect(inOverview).toEqual(limits);
      expect(limits).toEqual(JSON.parse(JSON.stringify(await control.getLimits('lim.a'))));
      return limits;
    };
    expect(await shown()).toMatchObject({
      rateLimit: { configured: { max: 50, perMs: 1000, burst: 1 }, effective: { max: 50, perMs: 1000, burst: 1 } },
      globalConcurrency: { configured: 3, effective: 3 },
      limitedUntil: null,
    });
    expect((await shown()).rateLimit).not.toHaveProperty('override');

    const set = await bearerPost(call, '/api/types/lim.a/limits/rate-limit', { rateLimit: { max: 10, perMs: 2000, burst: 0 } });
    expect(set.status).toBe(200);
    expect(((await set.json()) as Limits).rateLimit).toEqual({ configured: { max: 50, perMs: 1000, burst: 1 }, override: { max: 10, perMs: 2000, burst: 0 }, effective: { max: 10, perMs: 2000, burst: 0 } });
    // burst left out: the default, floor(max / 50)
    await bearerPost(call, '/api/types/lim.a/limits/rate-limit', { rateLimit: { max: 120, perMs: 1000 } });
    expect((await shown()).rateLimit.effective).toEqual({ max: 120, perMs: 1000, burst: 2 });
    const concurrency = await bearerPost(call, '/api/types/lim.a/limits/global-concurrency', { globalConcurrency: 7 });
    expect(((await concurrency.json()) as Limits).globalConcurrency).toEqual({ configured: 3, override: 7, effective: 7 });
    expect((await shown()).globalConcurrency).toEqual({ configured: 3, override: 7, effective: 7 });

    // clear: "no limit" over the options, until a reset
    await bearerPost(call, '/api/types/lim.a/limits/rate-limit', { rateLimit: null });
    await bearerPost(call, '/api/types/lim.a/limits/global-concurrency', { globalConcurrency: null });
    expect(await shown()).toMatchObject({
      rateLimit: { configured: { max: 50, perMs: 1000, burst: 1 }, override: null, effective: null },
      globalConcurrency: { configured: 3, override: null, effective: null },
    });

    const reset = await bearerPost(call, '/api/types/lim.a/limits/reset');
    expect(reset.status).toBe(200);
    const after = await shown();
    expect(after).toMatchObject({ rateLimit: { effective: { max: 50, perMs: 1000, burst: 1 } }, globalConcurrency: { configured: 3, effective: 3 } });
    expect(after.rateLimit).not.toHaveProperty('override');
    expect(after.globalConcurrency).not.toHaveProperty('override');
  });

  it('bad input of every kind is a 400 InvalidArgumentError naming the field, and nothing is written', async () => {
    const { call, control, prefix } = await withLimitedWorker('dlim-bad');
    await control.setGlobalConcurrency('lim.a', 2);
    const redis = connect(target);
    try {
      const hash = () => redis.hgetall(keysOf(prefix, 'lim.a').limits);
      const before = await hash();
      expect(before).toHaveProperty('gc!', '2');
      const rate: [unknown, string][] = [
        [[], 'body'],
        [{}, 'rateLimit'],
        [{ rateLimit: { max: 5, perMs: 1000 }, extra: 1 }, 'body'],
        [{ limit: { max: 5, perMs: 1000 } }, 'body'],
        [{ rateLimit: 'fast' }, 'rateLimit'],
        [{ rateLimit: [] }, 'rateLimit'],
        [{ rateLimit: true }, 'rateLimit'],
        [{ rateLimit: 5 }, 'rateLimit'],
        [{ rateLimit: {} }, 'rateLimit.max'],
        [{ rateLimit: { max: 5 } }, 'rateLimit.perMs'],
        [{ rateLimit: { perMs: 1000 } }, 'rateLimit.max'],
        [{ rateLimit: { max: '5', perMs: 1000 } }, 'rateLimit.max'],
        [{ rateLimit: { max: 5, perMs: '1000' } }, 'rateLimit.perMs'],
        [{ rateLimit: { max: 5.5, perMs: 1000 } }, 'rateLimit.max'],
        [{ rateLimit: { max: 0, perMs: 1000 } }, 'rateLimit.max'],
        [{ rateLimit: { max: -1, perMs: 1000 } }, 'rateLimit.max'],
        [{ rateLimit: { max: 1e7, perMs: 1000 } }, 'rateLimit.max'],
        [{ rateLimit: { max: 5, perMs: 0 } }, 'rateLimit.perMs'],
        [{ rateLimit: { max: 5, perMs: 2 ** 31 } }, 'rateLimit.perMs'],
        [{ rateLimit: { max: 5, perMs: 1000, burst: 6 } }, 'rateLimit.burst'],
        [{ rateLimit: { max: 5, perMs: 1000, burst: -1 } }, 'rateLimit.burst'],
        [{ rateLimit: { max: 5, perMs: 1000, burst: null } }, 'rateLimit.burst'],
        [{ rateLimit: { max: 5, perMs: 1000, every: 1 } }, 'rateLimit.every'],
        [{ rateLimit: { max: null, perMs: 1000 } }, 'rateLimit.max'],
      ];
      const concurrency: [unknown, string][] = [
        [[5], 'body'],
        [{}, 'globalConcurrency'],
        [{ n: 5 }, 'body'],
        [{ globalConcurrency: 5, rateLimit: null }, 'body'],
        [{ globalConcurrency: '5' }, 'globalConcurrency'],
        [{ globalConcurrency: 1.5 }, 'globalConcurrency'],
        [{ globalConcurrency: 0 }, 'globalConcurrency'],
        [{ globalConcurrency: -3 }, 'globalConcurrency'],
        [{ globalConcurrency: 1e7 }, 'globalConcurrency'],
        [{ globalConcurrency: true }, 'globalConcurrency'],
        [{ globalConcurrency: [] }, 'globalConcurrency'],
        [{ globalConcurrency: {} }, 'globalConcurrency'],
      ];
      const cases = [
        ...rate.map(([body, field]) => ['rate-limit', JSON.stringify(body), field] as const),
        ...concurrency.map(([body, field]) => ['global-concurrency', JSON.stringify(body), field] as const),
        // not JSON: the application's body parser answers 400 before any route (Nest's own error shape)
        ['rate-limit', '{"rateLimit": {"max": 5,', undefined],
        ['global-concurrency', 'globalConcurrency=5', undefined],
      ];
      for (const [route, text, field] of cases) {
        const res = await call(`/api/types/lim.a/limits/${route}`, { method: 'POST', headers: { ...auth, ...json }, body: text });
        const body = (await res.json()) as ErrorReply;
        const named = field === undefined || body.error.message.startsWith(`Invalid argument "${field}"`);
        expect({ route, text, status: res.status, name: field === undefined ? 'any' : body.error.name, named }).toEqual({
          route, text, status: 400, name: field === undefined ? 'any' : 'InvalidArgumentError', named: true,
        });
        expect(await hash()).toEqual(before);
      }
      const form = await call('/api/types/lim.a/limits/global-concurrency', {
        method: 'POST', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, body: 'globalConcurrency=5',
      });
      expect([form.status, ((await form.json()) as ErrorReply).error.name]).toEqual([400, 'InvalidArgumentError']);
      expect(await hash()).toEqual(before);
    } finally {
      redis.disconnect();
    }
  });

  it('an ordered type has no limits: every route answers the control service\'s 400; an unknown type is a 404', async () => {
    const prefix = uniquePrefix('dlim-ord');
    const Ordered = workerClass('lim.o', { ordered: true }, () => undefined);
    const { call } = await start({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions(prefix, 'm1', 2), types: { 'lim.d': {} } }, { token: TOKEN }, [Ordered]);
    const overview = (await (await call('/api/overview', { headers: auth })).json()) as { types: { type: string; limits?: Limits }[] };
    expect(overview.types.find((t) => t.type === 'lim.o')).not.toHaveProperty('limits');
    expect(overview.types.find((t) => t.type === 'lim.d')!.limits).toMatchObject({ rateLimit: { effective: null }, globalConcurrency: { effective: null }, running: 0 });
    const requests: [string, string, unknown?][] = [
      ['GET', '/api/types/lim.o/limits'],
      ['POST', '/api/types/lim.o/limits/rate-limit', { rateLimit: { max: 5, perMs: 1000 } }],
      ['POST', '/api/types/lim.o/limits/global-concurrency', { globalConcurrency: 2 }],
      ['POST', '/api/types/lim.o/limits/reset', {}],
    ];
    for (const [method, path, body] of requests) {
      const res = await call(path, { method, headers: { ...auth, ...json }, body: body === undefined ? undefined : JSON.stringify(body) });
      const { error } = (await res.json()) as ErrorReply;
      expect([path, res.status, error.name, error.message]).toEqual([path, 400, 'InvalidArgumentError', expect.stringMatching(/^Invalid argument "type": "lim.o" is ordered/)]);
    }
    for (const [method, path, body] of requests) {
      const res = await call(path.replace('lim.o', 'lim.nope'), { method, headers: { ...auth, ...json }, body: body === undefined ? undefined : JSON.stringify(body) });
      expect([path, res.status, ((await res.json()) as ErrorReply).error.name]).toEqual([path, 404, 'UnknownTaskTypeError']);
    }
  });

  it('shows limitedUntil after a handler\'s RateLimitedError, and the recent rate while tasks finish', async () => {
    const prefix = uniquePrefix('dlim-until');
    const W = workerClass('lim.r', { concurrency: 4, pollIntervalMs: 100 }, (task: Task) => {
      if (task.id === 'limited') throw new RateLimitedError(600_000);
    });
    const { call, submit } = await start({ connection: target.connection, keyPrefix: prefix }, { token: TOKEN }, [W]);
    const limitsOf = async () => bearerGet(call, '/api/types/lim.r/limits');
    // the first read asks the workers to log completions (the rate counts them from then on)
    expect(await limitsOf()).toMatchObject({ limitedUntil: null, recentPerSecond: 0 });
    await submit.submitMany('lim.r', Array.from({ length: 20 }, (_, i) => ({ id: `t${i}`, payload: i })));
    await waitFor(async () => (await limitsOf()).recentPerSecond > 0, { timeoutMs: 10_000, message: 'a recent rate' });
    await waitFor(async () => (await limitsOf()).recentPerSecond === 0, { timeoutMs: 15_000, message: 'the rate back to 0 after the window' });
    await submit.submit('lim.r', {}, { id: 'limited' });
    const limited = await waitFor(async () => {
      const overview = (await (await call('/api/overview', { headers: auth })).json()) as { now: number; types: { type: string; limits?: Limits }[] };
      const until = overview.types.find((t) => t.type === 'lim.r')!.limits!.limitedUntil;
      return until === null ? null : { until, now: overview.now };
    }, { timeoutMs: 10_000, message: 'limitedUntil shown' });
    expect(limited.until).toBeGreaterThan(limited.now + 500_000);
    expect((await limitsOf()).limitedUntil).toBe(limited.until);
  });
});
