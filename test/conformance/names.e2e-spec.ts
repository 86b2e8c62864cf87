/**
 * Conformance: names (see test odd-names for the Redis engines' every surface). The testing module keeps its
 * tasks in JavaScript maps, which could hold what Redis cannot; it must refuse and keep what Redis does.
 *
 * Pins down:
 * - odd ids, groups, ordering and dedupe keys (separators, `__proto__`, `%`, `/`, emoji, 256 characters) each
 *   come back exactly: the handler's id and key, `getTask`, `getGroup`; none collides with another;
 * - a NUL or an unpaired surrogate in an id, group, key, dedupe key or type, and `.` or `..` as an id, group or
 *   type: the same typed error on every engine, nothing written.
 */
import { Inject, Injectable } from '@nestjs/common';
import { InvalidSubmitOptionsError, InvalidTaskTypeError, TaskGroupsService, type Task } from 'nestjs-distributed-queue';
import { workerClass } from '../support/queue-app';
import { describeEngines, rejectionOf } from './engine';

const NAMES = ['a\nb', 'a:b:c', '{x}', '*?[a]', '%d+', '"\\', '../x', '?x=1#y', ' ', '__proto__', 'constructor', '0', '😀', 'e\u0301', 'é', '\u200b', 'x'.repeat(256)];
const REFUSED = ['a\u0000b', '\ud800', 'x\udbff', '\udfff'];
const DOTS = ['.', '..'];

const runs: { id: string; key?: string; group?: string }[] = [];
const Plain = workerClass<{ group?: string }>('nm', { maxAttempts: 1 }, (task: Task<{ group?: string }>) => void runs.push({ id: task.id, group: task.payload.group }));
const Ordered = workerClass('nm.ord', { ordered: true, maxAttempts: 1 }, (task: Task) => void runs.push({ id: task.id, key: task.key }));

let groups!: TaskGroupsService;
@Injectable()
class GroupsProbe {
  constructor(@Inject(TaskGroupsService) service: TaskGroupsService) {
    groups = service;
  }
}

const ROUTE = { route: { qId: 'nm', partitions: 2 } };

describeEngines('names', (start) => {
  afterEach(() => {
    runs.length = 0;
  });

  it('odd ids, groups, ordering and dedupe keys come back exactly, none colliding', async () => {
    const engine = await start(ROUTE, [Plain, Ordered, GroupsProbe]);
    await engine.control.pause('nm');
    for (const name of NAMES) expect(await engine.submit.submit('nm', {}, { id: name })).toBe(name);
    for (const [i, name] of NAMES.entries()) await engine.submit.submit('nm', { group: name }, { id: `g${i}`, group: name });
    for (const name of NAMES) expect(await engine.inspect.getTask('nm', name)).toMatchObject({ id: name, state: 'ready' });
    for (const name of NAMES) expect(await groups.getGroup('nm', name)).toMatchObject({ group: name, waiting: 1 });
    const deduped = await Promise.all(NAMES.map((key) => engine.submit.submitMany('nm', [{ payload: {}, dedupe: { key, ttlMs: 60_000 } }])));
    const again = await Promise.all(NAMES.map((key) => engine.submit.submitMany('nm', [{ payload: {}, dedupe: { key, ttlMs: 60_000 } }])));
    expect(new Set(deduped.map(([r]) => r.id)).size).toBe(NAMES.length);
    expect(again.map(([r]) => [r.created, r.id])).toEqual(deduped.map(([r]) => [false, r.id]));
    for (const [i, key] of NAMES.entries()) await engine.submit.submitOrdered('nm.ord', key, {}, { id: `k${i}` });
    await engine.control.resume('nm');
    await engine.settle(['nm', 'nm.ord']);
    const sorted = (list: string[]) => [...list].sort();
    expect(sorted(runs.filter((r) => r.key === undefined && r.group === undefined && NAMES.includes(r.id)).map((r) => r.id))).toEqual(sorted(NAMES));
    expect(sorted(runs.filter((r) => r.group !== undefined).map((r) => `${r.id}|${r.group}`))).toEqual(sorted(NAMES.map((n, i) => `g${i}|${n}`)));
    expect(sorted(runs.filter((r) => r.key !== undefined).map((r) => `${r.id}|${r.key}`))).toEqual(sorted(NAMES.map((n, i) => `k${i}|${n}`)));
  });

  it('a NUL, an unpaired surrogate, and "." or ".." where a URL carries the name: the same typed error, nothing written', async () => {
    const engine = await start(ROUTE, [Plain, Ordered, GroupsProbe]);
    const calls: [string, () => Promise<unknown>, string][] = [];
    for (const name of REFUSED) {
      calls.push(
        ['id', () => engine.submit.submit('nm', {}, { id: name }), InvalidSubmitOptionsError.name],
        ['group', () => engine.submit.submit('nm', {}, { group: name }), InvalidSubmitOptionsError.name],
        ['dedupe key', () => engine.submit.submit('nm', {}, { dedupe: { key: name } }), InvalidSubmitOptionsError.name],
        ['ordering key', () => engine.submit.submitOrdered('nm.ord', name, {}), InvalidSubmitOptionsError.name],
        ['type', () => engine.submit.submit(name, {}), InvalidTaskTypeError.name],
      );
    }
    for (const name of DOTS) {
      calls.push(
        ['id', () => engine.submit.submit('nm', {}, { id: name }), InvalidSubmitOptionsError.name],
        ['group', () => engine.submit.submit('nm', {}, { group: name }), InvalidSubmitOptionsError.name],
        ['type', () => engine.submit.submit(name, {}), InvalidTaskTypeError.name],
      );
    }
    for (const [what, call, name] of calls) expect([what, ((await rejectionOf(call())) as Error | undefined)?.name]).toEqual([what, name]);
    expect(await engine.inspect.getCounts('nm')).toEqual({ delayed: 0, ready: 0, running: 0, dead: 0, done: 0 });
    expect((await engine.inspect.getRouteStatus()).partitions.map((p) => p.waiting)).toEqual([0, 0]);
  });
});
