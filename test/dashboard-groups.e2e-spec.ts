/**
 * The dashboard's routes over the groups of delay-queue types (issue 29, item 3):
 * `GET <base>/api/types/:type/groups?offset=&limit=`, `GET .../groups/:group`, `POST .../groups/:group/pause`,
 * `.../resume`, `.../concurrency`, `.../weight`, against real servers (single and cluster).
 *
 * Failure matrix (what each cell covers):
 * | cell                                   | checked                                                                    |
 * | no auth / wrong token                  | 401 on every route (GET and POST), nothing written                         |
 * | cookie session without the CSRF header | 403 on every POST (none, forged), nothing written; with it 200; a Bearer client needs none |
 * | list paging on 250 groups              | pages of 50 by offset (the default) cover the 250 groups once each, largest backlog first, `total` 250 on every page; limit=100; an offset past the end: no group, total 250; what TaskGroupsService.getGroups answers |
 * | get                                    | a group's counts and settings as the service answers them (`due` included); a group nobody used: all zero |
 * | pause / resume                         | the answer, GET, the list and the service (Redis) agree: paused, then not |
 * | concurrency / weight                   | set (the answer, GET, the list, the service), cleared with null (absent: the type's / 1) |
 * | bad input of every kind                | bodies (not an object, missing, unknown and extra fields, strings, fractions, zero, negative, out of range, booleans, lists, objects, a form-encoded body), queries (negative, not a number, fractions, exponents, repeated, limit 0 and 1001), a group of 257 characters on every route: 400 `{ error: { name: 'InvalidArgumentError' } }` naming the field; malformed JSON and a malformed %-escape in the path: 400 before any route; each time the groups' settings and backlogs in Redis unchanged |
 * | ordered type                           | every route: 400 InvalidArgumentError naming `type` (the groups service's error), nothing written |
 * | unknown type                           | 404 UnknownTaskTypeError on every route                                    |
 * | group names                            | names with '/', '%', '%2F', spaces, quotes, '<script>', '?', '#', '&', '+', non-ASCII, and one of 256 characters round-trip: listed as submitted, read, paused and weighted by their URL-encoded path (the service sees the same name) |
 * Not covered: the names "." and ".." (a URL client resolves them as path segments before sending: the API
 * cannot address them; TaskGroupsService can).
 */
import { TaskGroupsService, type TaskGroup } from 'nestjs-distributed-queue';
import { signIn, TOKEN, useDashboards, type Call } from './support/dashboard';
import { connect, keysOf, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';

const auth = { authorization: `Bearer ${TOKEN}` };
const json = { 'content-type': 'application/json' };
const TYPE = 'grp.d';

interface GroupPage {
  type: string;
  offset: number;
  limit: number;
  total: number;
  groups: TaskGroup[];
}

interface ErrorReply {
  error: { name: string; message: string };
}

/** The path of a group's routes, the name URL-encoded as the page encodes it. */
const groupPath = (group: string, type = TYPE) => `/api/types/${encodeURIComponent(type)}/groups/${encodeURIComponent(group)}`;

describe.each(getTargets().map((t) => [t.name, t] as const))('dashboard groups API on %s', (_name, target: RedisTarget) => {
  const { start } = useDashboards();

  /** A dashboard app without workers (nothing runs: the backlogs stay) with one delay type. */
  async function dashboard(label: string, extra: object = {}) {
    const prefix = uniquePrefix(label);
    const dash = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { [TYPE]: {} }, ...extra }, { token: TOKEN }, []);
    return { ...dash, prefix, groups: dash.app.get(TaskGroupsService) };
  }

  /** What Redis holds of the type's groups: their settings and backlogs (see scripts/includes/groups.lua). */
  async function groupsInRedis(prefix: string, type = TYPE) {
    const redis = connect(target);
    try {
      const ws = keysOf(prefix, type).waiting;
      const [settings, backlogs] = await Promise.all([redis.hgetall(`${ws}:gset`), redis.zrange(`${ws}:gb`, 0, -1, 'WITHSCORES')]);
      return { settings, backlogs };
    } finally {
      redis.disconnect();
    }
  }

  const bearer = (call: Call, method: string, path: string, body?: unknown) =>
    call(path, { method, headers: { ...auth, ...json }, body: body === undefined ? undefined : JSON.stringify(body) });
  const bearerJson = async <T>(call: Call, method: string, path: string, body?: unknown): Promise<T> => {
    const res = await bearer(call, method, path, body);
    expect([method, path, res.status]).toEqual([method, path, 200]);
    return (await res.json()) as T;
  };

  const POSTS: [string, unknown][] = [['pause', {}], ['resume', {}], ['concurrency', { concurrency: 2 }], ['weight', { weight: 3 }]];

  it('every groups route needs the auth; a POST with a cookie session needs the CSRF header', async () => {
    const { call, prefix, submit } = await dashboard('dgrp-auth');
    await submit.submit(TYPE, {}, { group: 'g', delay: 3_600_000 });
    const before = await groupsInRedis(prefix);
    for (const path of ['/api/types/grp.d/groups', groupPath('g')]) {
      expect([path, (await call(path)).status]).toEqual([path, 401]);
      expect([path, (await call(path, { headers: { authorization: 'Bearer wrong' } })).status]).toEqual([path, 401]);
    }
    for (const [verb, body] of POSTS) {
      const path = `${groupPath('g')}/${verb}`;
      expect([path, (await call(path, { method: 'POST', headers: json, body: JSON.stringify(body) })).status]).toEqual([path, 401]);
      expect([path, (await call(path, { method: 'POST', headers: { ...json, authorization: 'Bearer wrong' }, body: JSON.stringify(body) })).status]).toEqual([path, 401]);
    }
    const { cookie, csrf } = await signIn(call);
    for (const [verb, body] of POSTS) {
      const path = `${groupPath('g')}/${verb}`;
      for (const header of [{}, { 'x-csrf-token': 'forged' }] as Record<string, string>[]) {
        const refused = await call(path, { method: 'POST', headers: { ...json, cookie, ...header }, body: JSON.stringify(body) });
        expect([path, refused.status, ((await refused.json()) as ErrorReply).error.name]).toEqual([path, 403, 'ForbiddenException']);
      }
    }
    expect(await groupsInRedis(prefix)).toEqual(before);
    const allowed = await call(`${groupPath('g')}/pause`, { method: 'POST', headers: { ...json, cookie, 'x-csrf-token': csrf }, body: '{}' });
    expect([allowed.status, ((await allowed.json()) as TaskGroup).paused]).toEqual([200, true]);
    const listed = await call('/api/types/grp.d/groups', { headers: { cookie } });
    expect([listed.status, ((await listed.json()) as GroupPage).groups]).toEqual([200, [{ group: 'g', waiting: 1, running: 0, paused: true }]]);
  });

  it('lists 250 groups by pages of 50, the largest backlog first, as the groups service does', async () => {
    const { call, submit, groups } = await dashboard('dgrp-pages');
    // group i holds (i % 4) + 1 tasks: 625 tasks, backlogs 1 to 4
    const names = Array.from({ length: 250 }, (_, i) => `tenant-${String(i).padStart(3, '0')}`);
    await submit.submitMany(TYPE, names.flatMap((group, i) => Array.from({ length: (i % 4) + 1 }, () => ({ payload: {}, group, delay: 3_600_000 }))));
    const seen: TaskGroup[] = [];
    for (let offset = 0; offset < 250; offset += 50) {
      const page = await bearerJson<GroupPage>(call, 'GET', offset ? `/api/types/grp.d/groups?offset=${offset}` : '/api/types/grp.d/groups');
      expect({ ...page, groups: page.groups.length }).toEqual({ type: TYPE, offset, limit: 50, total: 250, groups: 50 });
      expect(page.groups).toEqual(JSON.parse(JSON.stringify((await groups.getGroups(TYPE, { offset, limit: 50 })).groups)));
      seen.push(...page.groups);
    }
    expect(seen.map((g) => g.group).sort()).toEqual(names);
    const backlogs = seen.map((g) => g.waiting);
    expect(backlogs).toEqual([...backlogs].sort((a, b) => b - a));
    expect(seen[0]).toEqual({ group: expect.any(String), waiting: 4, running: 0, paused: false });
    expect(seen.filter((g) => g.waiting === 4)).toHaveLength(62);
    const wide = await bearerJson<GroupPage>(call, 'GET', '/api/types/grp.d/groups?offset=150&limit=100');
    expect(wide.groups.map((g) => g.group)).toEqual(seen.slice(150).map((g) => g.group));
    expect(await bearerJson<GroupPage>(call, 'GET', '/api/types/grp.d/groups?offset=250')).toEqual({ type: TYPE, offset: 250, limit: 50, total: 250, groups: [] });
  });

  it('reads one group, pauses and resumes it, sets and clears its concurrency and weight', async () => {
    const { call, submit, groups } = await dashboard('dgrp-set');
    await submit.submitMany(TYPE, [{ payload: {}, group: 'acme' }, { payload: {}, group: 'acme', delay: 3_600_000 }, { payload: {}, group: 'other' }]);
    /** The answer, GET, the list's row and the service agree; returns the group. */
    const agreed = async (answer: TaskGroup): Promise<TaskGroup> => {
      const [read, page, own] = await Promise.all([
        bearerJson<TaskGroup>(call, 'GET', groupPath('acme')),
        bearerJson<GroupPage>(call, 'GET', '/api/types/grp.d/groups'),
        groups.getGroup(TYPE, 'acme'),
      ]);
      expect(read).toEqual(answer);
      expect(read).toEqual(JSON.parse(JSON.stringify(own)));
      const { due: _due, ...row } = read;
      expect(page.groups.find((g) => g.group === 'acme')).toEqual(row);
      return read;
    };
    expect(await agreed(await bearerJson(call, 'GET', groupPath('acme')))).toEqual({ group: 'acme', waiting: 2, due: 1, running: 0, paused: false });
    expect(await bearerJson(call, 'GET', groupPath('nobody'))).toEqual({ group: 'nobody', waiting: 0, due: 0, running: 0, paused: false });

    expect((await agreed(await bearerJson(call, 'POST', `${groupPath('acme')}/pause`))).paused).toBe(true);
    expect((await agreed(await bearerJson(call, 'POST', `${groupPath('acme')}/resume`))).paused).toBe(false);
    expect(await agreed(await bearerJson(call, 'POST', `${groupPath('acme')}/concurrency`, { concurrency: 3 }))).toMatchObject({ concurrency: 3 });
    expect(await agreed(await bearerJson(call, 'POST', `${groupPath('acme')}/weight`, { weight: 1000 }))).toMatchObject({ concurrency: 3, weight: 1000 });
    const cleared = await agreed(await bearerJson(call, 'POST', `${groupPath('acme')}/concurrency`, { concurrency: null }));
    expect(cleared).toEqual({ group: 'acme', waiting: 2, due: 1, running: 0, paused: false, weight: 1000 });
    expect(await agreed(await bearerJson(call, 'POST', `${groupPath('acme')}/weight`, { weight: null }))).toEqual({ group: 'acme', waiting: 2, due: 1, running: 0, paused: false });
    // a group without a backlog can be set too (it is not listed)
    expect(await bearerJson(call, 'POST', `${groupPath('idle')}/pause`)).toEqual({ group: 'idle', waiting: 0, due: 0, running: 0, paused: true });
    expect((await groups.getGroup(TYPE, 'idle')).paused).toBe(true);
    expect(await bearerJson(call, 'GET', groupPath('other'))).toEqual({ group: 'other', waiting: 1, due: 1, running: 0, paused: false });
  });

  it('bad input of every kind is a 400 InvalidArgumentError naming the field, and nothing is written', async () => {
    const { call, prefix, submit, groups } = await dashboard('dgrp-bad');
    await submit.submitMany(TYPE, [{ payload: {}, group: 'g', delay: 3_600_000 }, { payload: {}, group: 'h', delay: 3_600_000 }]);
    await groups.setGroupConcurrency(TYPE, 'g', 2);
    await groups.setGroupWeight(TYPE, 'g', 4);
    const before = await groupsInRedis(prefix);
    expect(before.settings).toEqual({ 'c:g': '2', 'w:g': '4' });
    const counts = (field: 'concurrency' | 'weight', max: number): [unknown, string][] => [
      [[], 'body'], [[5], 'body'], [{}, field], [{ n: 5 }, 'body'], [{ [field]: 2, extra: 1 }, 'body'],
      [{ [field]: '2' }, field], [{ [field]: 1.5 }, field], [{ [field]: 0 }, field], [{ [field]: -1 }, field], [{ [field]: max + 1 }, field],
      [{ [field]: true }, field], [{ [field]: [] }, field], [{ [field]: {} }, field], [{ [field]: 'null' }, field],
    ];
    const cases: [string, string, string | undefined, string | undefined][] = [
      ...counts('concurrency', 1_000_000).map(([body, field]) => [`${groupPath('g')}/concurrency`, JSON.stringify(body), 'application/json', field] as [string, string, string, string]),
      ...counts('weight', 1000).map(([body, field]) => [`${groupPath('g')}/weight`, JSON.stringify(body), 'application/json', field] as [string, string, string, string]),
      [`${groupPath('g')}/concurrency`, 'concurrency=5', 'application/x-www-form-urlencoded', 'concurrency'],
      [`${groupPath('g')}/weight`, 'weight=5', 'application/x-www-form-urlencoded', 'weight'],
      // not JSON, or JSON but not an object or list: the application's body parser answers 400 before any route
      [`${groupPath('g')}/weight`, '{"weight": 2', 'application/json', undefined],
      [`${groupPath('g')}/weight`, '5', 'application/json', undefined],
      [`${groupPath('g')}/concurrency`, '"x"', 'application/json', undefined],
      [`${groupPath('g')}/concurrency`, 'null', 'application/json', undefined],
      ...POSTS.map(([verb, body]) => [`${groupPath('x'.repeat(257))}/${verb}`, JSON.stringify(body), 'application/json', 'group'] as [string, string, string, string]),
    ];
    for (const [path, text, contentType, field] of cases) {
      const res = await call(path, { method: 'POST', headers: { ...auth, 'content-type': contentType! }, body: text });
      const body = (await res.json()) as ErrorReply;
      const named = field === undefined || body.error.message.startsWith(`Invalid argument "${field}"`);
      const shown = path.length > 80 ? `${path.slice(0, 60)}…${path.slice(-12)}` : path;
      expect({ shown, text, status: res.status, name: field === undefined ? 'any' : body.error.name, named, message: named ? '' : body.error.message }).toEqual({
        shown, text, status: 400, name: field === undefined ? 'any' : 'InvalidArgumentError', named: true, message: '',
      });
      expect(await groupsInRedis(prefix)).toEqual(before);
    }
    const queries: [string, string][] = [
      ['offset=-1', 'offset'], ['offset=abc', 'offset'], ['offset=1.5', 'offset'], ['offset=1e2', 'offset'], ['offset=%201', 'offset'],
      ['offset=1&offset=2', 'offset'], ['offset=0x10', 'offset'], ['limit=0', 'limit'], ['limit=1001', 'limit'], ['limit=-5', 'limit'], ['limit=ten', 'limit'],
    ];
    for (const [query, field] of queries) {
      const res = await call(`/api/types/grp.d/groups?${query}`, { headers: auth });
      const { error } = (await res.json()) as ErrorReply;
      expect([query, res.status, error.name, error.message.startsWith(`Invalid argument "${field}"`)]).toEqual([query, 400, 'InvalidArgumentError', true]);
    }
    const long = await call(groupPath('x'.repeat(257)), { headers: auth });
    expect([long.status, ((await long.json()) as ErrorReply).error.message]).toEqual([400, expect.stringMatching(/^Invalid argument "group"/)]);
    // a malformed escape: the router answers 400 before any route
    expect((await call('/api/types/grp.d/groups/%ZZ/pause', { method: 'POST', headers: { ...auth, ...json }, body: '{}' })).status).toBe(400);
    expect(await groupsInRedis(prefix)).toEqual(before);
  });

  it('an ordered type has no groups: every route answers the groups service\'s 400; an unknown type is a 404', async () => {
    const prefix = uniquePrefix('dgrp-ord');
    const Ordered = workerClass('grp.o', { ordered: true }, () => undefined);
    const { call } = await start({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions(prefix, 'm1', 2), types: { [TYPE]: {} } }, { token: TOKEN }, [Ordered]);
    const requests: [string, string, unknown?][] = [
      ['GET', '/api/types/grp.o/groups'],
      ['GET', groupPath('g', 'grp.o')],
      ...POSTS.map(([verb, body]) => ['POST', `${groupPath('g', 'grp.o')}/${verb}`, body] as [string, string, unknown]),
    ];
    for (const [method, path, body] of requests) {
      const res = await bearer(call, method, path, body);
      const { error } = (await res.json()) as ErrorReply;
      expect([path, res.status, error.name, error.message]).toEqual([path, 400, 'InvalidArgumentError', expect.stringMatching(/^Invalid argument "type": "grp.o" is ordered/)]);
    }
    expect(await groupsInRedis(prefix, 'grp.o')).toEqual({ settings: {}, backlogs: [] });
    for (const [method, path, body] of requests) {
      const res = await bearer(call, method, path.replace('grp.o', 'grp.nope'), body);
      expect([path, res.status, ((await res.json()) as ErrorReply).error.name]).toEqual([path, 404, 'UnknownTaskTypeError']);
    }
  });

  it('group names with slashes, percent signs, spaces, quotes and markup round-trip through their URL-encoded paths', async () => {
    const { call, submit, groups } = await dashboard('dgrp-names');
    const names = [
      'a/b', '100%', 'x%2Fy', ' spaced  name ', `"double" and 'single'`, '<script>alert(1)</script>', 'what?#frag&x=1+2', 'élan—東京', '%', '/', 'é'.repeat(256),
    ];
    await submit.submitMany(TYPE, names.flatMap((group, i) => Array.from({ length: i + 1 }, () => ({ payload: {}, group, delay: 3_600_000 }))));
    const page = await bearerJson<GroupPage>(call, 'GET', '/api/types/grp.d/groups');
    expect(page.groups.map((g) => g.group)).toEqual([...names].reverse());
    for (const [i, name] of names.entries()) {
      expect([name, await bearerJson(call, 'GET', groupPath(name))]).toEqual([name, { group: name, waiting: i + 1, due: 0, running: 0, paused: false }]);
      expect((await bearerJson<TaskGroup>(call, 'POST', `${groupPath(name)}/pause`)).group).toBe(name);
      expect((await bearerJson<TaskGroup>(call, 'POST', `${groupPath(name)}/weight`, { weight: i + 2 })).weight).toBe(i + 2);
      expect([name, await groups.getGroup(TYPE, name)]).toEqual([name, expect.objectContaining({ group: name, paused: true, weight: i + 2, waiting: i + 1 })]);
    }
    // the names the service sees are exactly these: no other group was written
    expect((await groups.getGroups(TYPE)).groups.map((g) => [g.group, g.paused, g.weight])).toEqual([...names].reverse().map((n) => [n, true, names.indexOf(n) + 2]));
    expect((await groups.getGroup(TYPE, 'a')).paused).toBe(false);
  });
});
