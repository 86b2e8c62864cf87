/**
 * Names of every kind: task ids, types, groups, ordering keys, dedupe keys and flow refs that JavaScript,
 * Redis, PostgreSQL and a URL each treat differently. The library keys data by them; two names must never be
 * one, and a name must come back exactly as given, everywhere it is shown.
 *
 * Failure matrix (single server and cluster):
 * | name kind | odd but storable names (ODD below): round trip, no collision | unstorable names: typed error, nothing written |
 * | task id | submit, getTask, listTasks, the dashboard's detail, run-now and history (URL-encoded), the handler, the local and fleet events, the history | submit, getTask, cancel, reschedule, getHistory |
 * | type | one worker each: submit, run, getCounts, the dashboard's overview and listing, the events, the metrics' labels | submit, getCounts |
 * | group | the dashboard's pause (URL-encoded), getGroup, getGroups, nothing runs paused, the handler after resume | submit, pauseGroup, getGroup |
 * | ordering key | the handler's key, each key's items in order | submitOrdered |
 * | dedupe key | a second submit is deduplicated, distinct keys never are | submit |
 * | flow ref | each node runs with its ref and its dependency's result | submitFlow |
 * | internal type names (`__route__.<q>`, `__cron__…`) | — | a @TaskWorker or `types` entry of such a name (before: a worker `__cron__.x` was accepted, beside the runs of a schedule `x`) |
 * Unstorable: a NUL (PostgreSQL's text cannot hold it) or an unpaired surrogate (Redis stores text as UTF-8:
 * `'\ud800'` and `'\udbff'` were both sent as U+FFFD, one key: before the check, three such ids were one task,
 * the later submits replacing the first's payload, and three such groups one group).
 */
import { Injectable } from '@nestjs/common';
import {
  InvalidArgumentError, InvalidFlowError, InvalidOptionsError, InvalidSubmitOptionsError, InvalidTaskTypeError, OnTaskEvent, TaskFlowService, TaskGroupsService,
  TaskHistoryService, TaskInspectorService, TaskSubmitService, type TaskEvent,
} from 'nestjs-distributed-queue';
import { Registry } from 'prom-client';
import { signIn, TOKEN, useDashboards } from './support/dashboard';
import { parseExposition, sampleValue } from './support/prometheus';
import { PG_URL, useSchemaNames } from './support/pg';
import { connect, keysOfType, useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

/** Names that are storable but that some layer could mistake: separators, patterns, URL syntax, object keys, Unicode. */
const ODD: Record<string, string> = {
  newline: 'a\nb', crlf: 'a\r\nb', tab: 'a\tb', colon: 'a:b:c', brace: '{x}', braces: '}{', glob: '*?[a]', lua: '%d+.-^$', json: '"\\',
  slash: '../x/y', dot: '.', dots: '..', query: '?x=1#y', pct: '%2F', space: ' ', plus: 'a+b', amp: 'a&b=c', proto: '__proto__', ctor: 'constructor',
  tostr: 'toString', zero: '0', neg: '-1', nul: 'null', emoji: '😀', pair: '\ud83d\ude00x', rtl: '\u202eabc', zw: '\u200b', nfc: 'é', nfd: 'e\u0301',
  fffd: '\ufffd', max: 'x'.repeat(256), maxEmoji: '😀'.repeat(128), record: '~1:2:3:p5:', html: '<img src=x onerror=alert(1)>',
};
/** Names no layer can keep apart or store: each refused with a typed error. */
const UNSTORABLE = ['a\u0000b', '\ud800', 'x\udbff', '\udfff', '\udc00\ud800'];

/** Names a URL cannot carry as a path segment: refused as ids, types, groups and flow ids (the dashboard's paths). */
const DOTS = ['.', '..'];

/**
 * ODD as names of a kind: `strip` removes what that kind refuses anyway (types hold no braces or white space),
 * `inUrl` leaves out `.` and `..` (names the dashboard puts in a path).
 */
function oddNames(inUrl: boolean, strip?: RegExp): string[] {
  const names = Object.values(ODD).map((n) => (strip ? n.replace(strip, '') : n)).filter((n) => n.length > 0 && (!strip || n.length <= 200));
  return [...new Set(names)].filter((n) => !inUrl || !DOTS.includes(n));
}

/** Completions heard by a local and by a fleet listener (the fleet one from each type's event stream). */
function recorder() {
  const seen: TaskEvent[] = [];
  const fleet: TaskEvent[] = [];
  @Injectable()
  class Recorder {
    @OnTaskEvent('*', ['completed'])
    on(event: TaskEvent): void {
      seen.push(event);
    }

    @OnTaskEvent('*', ['completed'], { scope: 'fleet' })
    onFleet(event: TaskEvent): void {
      fleet.push(event);
    }
  }
  return { Recorder, seen, fleet };
}

const sorted = (list: string[]) => [...list].sort();

describe.each(getTargets().map((t) => [t.name, t] as const))('odd names on %s', (_n, target) => {
  const { start, redis } = useQueueApps(target);
  const dashboards = useDashboards();
  const newSchema = useSchemaNames();

  it('task ids: each comes back exactly from the inspector, the dashboard (URL-encoded), the handler, the events and the history; none collides', async () => {
    const ids = oddNames(true);
    const ran: string[] = [];
    const { Recorder, seen, fleet } = recorder();
    const keyPrefix = uniquePrefix('odd-ids');
    const { call, app } = await dashboards.start(
      { connection: target.connection, keyPrefix, keepDone: 1000, history: { connection: PG_URL, schema: newSchema(), flushIntervalMs: 50 } },
      { token: TOKEN },
      [workerClass('odd', {}, (t) => void ran.push(t.id)), Recorder],
    );
    const submit = app.get(TaskSubmitService);
    for (const [i, id] of ids.entries()) expect(await submit.submit('odd', { i }, { id, delay: 600_000 })).toBe(id);
    const inspect = app.get(TaskInspectorService);
    for (const [i, id] of ids.entries()) expect(await inspect.getTask('odd', id)).toMatchObject({ id, state: 'delayed', payload: { i } });
    expect(sorted((await inspect.listTasks('odd', 'delayed', { limit: 1000 })).map((t) => t.id))).toEqual(sorted(ids));

    const { cookie, csrf } = await signIn(call);
    const at = (id: string) => `/api/types/odd/tasks/${encodeURIComponent(id)}`;
    for (const [i, id] of ids.entries()) {
      const detail = await call(at(id), { headers: { cookie } });
      expect([id, detail.status]).toEqual([id, 200]);
      expect(await detail.json()).toMatchObject({ id, payload: { i } });
      const runNow = await call(`${at(id)}/run-now`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrf } });
      expect([id, runNow.status, await runNow.json()]).toEqual([id, 200, { ok: true }]);
    }
    await waitFor(async () => ran.length >= ids.length && seen.length >= ids.length, { timeoutMs: 10_000, message: 'every task run and heard' });
    expect(sorted(ran)).toEqual(sorted(ids));
    expect(sorted(seen.map((e) => e.task.id))).toEqual(sorted(ids));
    await waitFor(async () => fleet.length >= ids.length, { timeoutMs: 10_000, message: 'every completion heard by the fleet listener' });
    expect(sorted(fleet.map((e) => e.task.id))).toEqual(sorted(ids));

    const history = app.get(TaskHistoryService);
    await history.flush({ timeoutMs: 10_000 });
    for (const [i, id] of ids.entries()) {
      expect(await history.getHistory('odd', id)).toMatchObject({ id, status: 'done', payload: { i } });
      const row = await call(`${at(id)}/history`, { headers: { cookie } });
      expect([id, row.status]).toEqual([id, 200]);
      expect(await row.json()).toMatchObject({ id, status: 'done' });
    }
    expect(await inspect.getCounts('odd')).toMatchObject({ delayed: 0, ready: 0, done: ids.length });
  });

  it('types: a worker each, run, counted, shown by the dashboard and the metrics and heard by their names', async () => {
    const types = oddNames(true, /[{}\s]/g);
    const ran: string[] = [];
    const { Recorder, seen, fleet } = recorder();
    const registry = new Registry();
    const { call, app, submit } = await dashboards.start(
      { connection: target.connection, keyPrefix: uniquePrefix('odd-types'), metrics: { registry } },
      { token: TOKEN },
      [...types.map((type) => workerClass(type, {}, (t) => void ran.push(t.type))), Recorder],
    );
    for (const type of types) await submit.submit(type, { type });
    await waitFor(async () => ran.length >= types.length && seen.length >= types.length, { timeoutMs: 10_000, message: 'one task of each type run' });
    expect(sorted(ran)).toEqual(sorted(types));
    expect(sorted(seen.map((e) => e.task.type))).toEqual(sorted(types));
    await waitFor(async () => fleet.length >= types.length, { timeoutMs: 10_000, message: 'every completion heard by the fleet listener' });
    expect(sorted(fleet.map((e) => e.task.type))).toEqual(sorted(types));
    const inspect = app.get(TaskInspectorService);
    const counts = await inspect.getCountsOf(types);
    for (const type of types) expect([type, counts.get(type)?.done, (await inspect.getCounts(type)).done]).toEqual([type, 1, 1]);
    const { cookie } = await signIn(call);
    const overview = (await (await call('/api/overview', { headers: { cookie } })).json()) as { types: { type: string }[] };
    expect(sorted(overview.types.map((t) => t.type))).toEqual(sorted(types));
    for (const type of types) {
      const listing = await call(`/api/types/${encodeURIComponent(type)}/tasks?state=ready`, { headers: { cookie } });
      expect([type, listing.status]).toEqual([type, 200]);
    }
    const samples = parseExposition(await registry.metrics());
    for (const type of types) expect([type, sampleValue(samples, 'dq_tasks_completed_total', { type })]).toEqual([type, 1]);
  });

  it('groups: paused through the dashboard by their names, none runs; each listed once; resumed, each task runs', async () => {
    const groupNames = oddNames(true);
    const ran: string[] = [];
    const { call, app, submit } = await dashboards.start(
      { connection: target.connection, keyPrefix: uniquePrefix('odd-groups') },
      { token: TOKEN },
      [workerClass<{ group: string }>('oddg', {}, (t) => void ran.push(t.payload.group))],
    );
    const groups = app.get(TaskGroupsService);
    const { cookie, csrf } = await signIn(call);
    for (const group of groupNames) {
      const paused = await call(`/api/types/oddg/groups/${encodeURIComponent(group)}/pause`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrf } });
      expect([group, paused.status]).toEqual([group, 200]);
      await submit.submit('oddg', { group }, { group });
    }
    for (const group of groupNames) expect(await groups.getGroup('oddg', group)).toMatchObject({ group, paused: true, waiting: 1 });
    const listed: string[] = [];
    for (let offset = 0; ; offset += 7) {
      const page = await groups.getGroups('oddg', { offset, limit: 7 });
      expect(page.total).toBe(groupNames.length);
      listed.push(...page.groups.map((g) => g.group));
      if (page.groups.length < 7) break;
    }
    expect(sorted(listed)).toEqual(sorted(groupNames));
    for (const group of groupNames) {
      const shown = await call(`/api/types/oddg/groups/${encodeURIComponent(group)}`, { headers: { cookie } });
      expect([group, shown.status]).toEqual([group, 200]);
      expect(await shown.json()).toMatchObject({ group, paused: true });
    }
    await sleep(300);
    expect(ran).toEqual([]);
    for (const group of groupNames) await groups.resumeGroup('oddg', group);
    await waitFor(async () => ran.length >= groupNames.length, { timeoutMs: 10_000, message: 'every group run' });
    expect(sorted(ran)).toEqual(sorted(groupNames));
  });

  it('ordering keys: each key its own, its items in order; dedupe keys: a repeat deduplicated, distinct keys never', async () => {
    const keys = oddNames(false);
    const byKey = new Map<string, number[]>();
    const app = await start(
      { connection: target.connection, keyPrefix: uniquePrefix('odd-keys'), route: routeTestOptions('q', 'm', 4), keepDone: 1000 },
      [
        workerClass<{ n: number }>('oddk', { ordered: true }, (t) => void byKey.set(t.key!, [...(byKey.get(t.key!) ?? []), t.payload.n])),
        workerClass('oddd', {}, () => undefined),
      ],
    );
    for (let n = 0; n < 3; n++) for (const key of keys) await app.submit.submitOrdered('oddk', key, { n });
    await waitFor(async () => [...byKey.values()].reduce((s, l) => s + l.length, 0) >= keys.length * 3, { timeoutMs: 15_000, message: 'every ordered item run' });
    expect(sorted([...byKey.keys()])).toEqual(sorted(keys));
    for (const key of keys) expect([key, byKey.get(key)]).toEqual([key, [0, 1, 2]]);

    const first = await Promise.all(keys.map((key) => app.submit.submitMany('oddd', [{ payload: { key }, dedupe: { key, ttlMs: 600_000 } }])));
    const again = await Promise.all(keys.map((key) => app.submit.submitMany('oddd', [{ payload: { key }, dedupe: { key, ttlMs: 600_000 } }])));
    expect(new Set(first.map(([r]) => r.id)).size).toBe(keys.length);
    expect(first.map(([r]) => r.created)).toEqual(keys.map(() => true));
    expect(again.map(([r]) => [r.created, r.id])).toEqual(first.map(([r]) => [false, r.id]));
  });

  it('flow refs: each node runs with its ref and its dependency result', async () => {
    const refs = oddNames(false, /[\u0000-\u001f\u007f]/g).filter((r) => r.length <= 128);
    const got = new Map<string, unknown>();
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('odd-refs') }, [
      workerClass<{ ref: string }>('oddf', {}, (t) => {
        got.set(t.flow!.ref, t.flow!.results);
        return { ref: t.payload.ref };
      }),
    ]);
    const nodes = refs.map((ref, i) => ({ ref, type: 'oddf', payload: { ref }, dependsOn: i === 0 ? [] : [refs[i - 1]] }));
    const submitted = await app.app.get(TaskFlowService).submitFlow(nodes, { id: 'odd-refs' });
    expect(sorted(Object.keys(submitted.nodes))).toEqual(sorted(refs));
    for (const ref of refs) expect([ref, submitted.nodes[ref]]).toEqual([ref, { type: 'oddf', id: `&odd-refs:${ref}` }]);
    await waitFor(async () => got.size >= refs.length, { timeoutMs: 20_000, message: 'every node run' });
    for (const [i, ref] of refs.entries()) expect([ref, got.get(ref)]).toEqual([ref, i === 0 ? {} : { [refs[i - 1]]: { ref: refs[i - 1] } }]);
  });

  it("the library's internal type names cannot be declared: a @TaskWorker or a types entry of one is refused", async () => {
    for (const type of ['__route__.q', '__cron__', '__cron__.nightly']) {
      expect(() => workerClass(type, {}, () => undefined)).toThrow(InvalidTaskTypeError);
      const refused = await start({ connection: target.connection, keyPrefix: uniquePrefix('odd-internal'), types: { [type]: {} } }).catch((e: Error) => e);
      expect([type, refused instanceof InvalidOptionsError, (refused as Error).message]).toEqual([type, true, expect.stringContaining("internal types")]);
    }
  });

  it('unstorable names (a NUL, an unpaired surrogate): a typed error from every call, nothing written', async () => {
    const keyPrefix = uniquePrefix('odd-refused');
    const app = await start(
      { connection: target.connection, keyPrefix, route: routeTestOptions('q', 'm', 2), history: { connection: PG_URL, schema: newSchema() } },
      [workerClass('bad', {}, () => undefined), workerClass('badk', { ordered: true }, () => undefined)],
    );
    const groups = app.app.get(TaskGroupsService);
    const flows = app.app.get(TaskFlowService);
    const history = app.app.get(TaskHistoryService);
    const refused: [string, () => Promise<unknown>, new (...args: any[]) => Error][] = [];
    for (const name of UNSTORABLE) {
      refused.push(
        ['submit id', () => app.submit.submit('bad', {}, { id: name }), InvalidSubmitOptionsError],
        ['submit group', () => app.submit.submit('bad', {}, { group: name }), InvalidSubmitOptionsError],
        ['submit dedupe key', () => app.submit.submit('bad', {}, { dedupe: { key: name } }), InvalidSubmitOptionsError],
        ['submit type', () => app.submit.submit(name, {}), InvalidTaskTypeError],
        ['submitOrdered key', () => app.submit.submitOrdered('badk', name, {}), InvalidSubmitOptionsError],
        ['submitFlow ref', () => flows.submitFlow([{ ref: name, type: 'bad', payload: {} }]), InvalidFlowError],
        ['getTask', () => app.inspect.getTask('bad', name), InvalidSubmitOptionsError],
        ['cancel', () => app.submit.cancel('bad', name), InvalidSubmitOptionsError],
        ['reschedule', () => app.submit.reschedule('bad', name, { delay: 0 }), InvalidSubmitOptionsError],
        ['getHistory', () => history.getHistory('bad', name), InvalidSubmitOptionsError],
        ['getCounts', () => app.inspect.getCounts(name), InvalidTaskTypeError],
        ['pauseGroup', () => groups.pauseGroup('bad', name), InvalidArgumentError],
        ['getGroup', () => groups.getGroup('bad', name), InvalidArgumentError],
      );
    }
    for (const name of DOTS) {
      refused.push(
        ['submit id', () => app.submit.submit('bad', {}, { id: name }), InvalidSubmitOptionsError],
        ['submit group', () => app.submit.submit('bad', {}, { group: name }), InvalidSubmitOptionsError],
        ['submit type', () => app.submit.submit(name, {}), InvalidTaskTypeError],
        ['submitFlow id', () => flows.submitFlow([{ ref: 'a', type: 'bad', payload: {} }], { id: name }), InvalidFlowError],
        ['getTask', () => app.inspect.getTask('bad', name), InvalidSubmitOptionsError],
        ['pauseGroup', () => groups.pauseGroup('bad', name), InvalidArgumentError],
      );
    }
    const client = redis();
    // NOTE: the history writer's lease on the type's stream (`log:writer`) is taken when its copying starts, which
    // may come after `before` was read (a full run saw it once): the writer's own, not a refused call's write.
    const keys = async (): Promise<string[]> => sorted((await keysOfType(client, keyPrefix, 'bad')).filter((k) => !k.endsWith(':log:writer')));
    const before = await keys();
    for (const [what, callIt, type] of refused) {
      const outcome = await callIt().then(() => 'answered', (e: unknown) => e);
      expect([what, outcome instanceof type]).toEqual([what, true]);
    }
    expect(await keys()).toEqual(before);
    expect(await app.inspect.getCounts('bad')).toMatchObject({ delayed: 0, ready: 0 });
    expect((await app.inspect.getRouteStatus()).partitions.map((p) => p.waiting)).toEqual([0, 0]);
  });
});
