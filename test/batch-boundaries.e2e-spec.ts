/**
 * Batch boundaries: every loop that works in batches, at one below, exactly at and one past its batch (and a
 * multiple), where an off-by-one loses the last item, repeats one, or stops a page early.
 *
 * Failure matrix (single server and cluster):
 * | batch | sizes | checked |
 * | submitMany: 500 tasks a script call | 499, 500, 501, 1,000, 1,001 | every result in order, created; again: none created, the same ids; each runs once |
 * | submitOrderedMany on one key | 501 | run in order, each once |
 * | a flow node's context: 250 dependencies a call | 249, 250, 251, 500, 501 | every dependency's result in `task.flow.results` |
 * | getFlow: 100 nodes a page, 500 live states a call | 99, 100, 101, 500, 501, 502 nodes | every node listed once, completed, with its result |
 * | purgeDead: 1,000 a call | 999, 1,000, 1,001 dead letters | the count, none left |
 * | listTaskPage: up to 1,000 a page | 999, 1,000, 1,001, 2,001 ready tasks at limit 1,000 | every task on exactly one page, in order; the last page has no cursor |
 */
import { Logger } from '@nestjs/common';
import { TaskFlowService } from 'nestjs-distributed-queue';
import { useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('batch boundaries on %s', (_n, target) => {
  const { start } = useQueueApps(target);
  afterEach(() => jest.restoreAllMocks());
  const options = (label: string) => ({ connection: target.connection, keyPrefix: uniquePrefix(label) });

  it.each([499, 500, 501, 1000, 1001])('submitMany of %i: every result in order, each created once and run once', async (n) => {
    const ran = new Map<string, number>();
    const app = await start(options('bb-submit'), [workerClass('bb', { concurrency: 50 }, (t) => void ran.set(t.id, (ran.get(t.id) ?? 0) + 1))]);
    await app.control.pause('bb');
    const items = Array.from({ length: n }, (_, i) => ({ id: `t${i}`, payload: { i } }));
    expect(await app.submit.submitMany('bb', items)).toEqual(items.map(({ id }) => ({ id, created: true })));
    expect(await app.submit.submitMany('bb', items)).toEqual(items.map(({ id }) => ({ id, created: false })));
    expect(await app.inspect.getCounts('bb')).toMatchObject({ ready: n });
    await app.control.resume('bb');
    await waitFor(async () => (await app.inspect.getCounts('bb')).done >= Math.min(n, 1000) && ran.size === n, { timeoutMs: 20_000, message: 'every task run' });
    expect([...ran.values()].every((c) => c === 1)).toBe(true);
  });

  it('submitOrderedMany of 501 on one key: run in order, each once', async () => {
    const seen: number[] = [];
    const app = await start({ ...options('bb-ordered'), route: routeTestOptions('q', 'm', 2) }, [
      workerClass<{ i: number }>('bbo', { ordered: true }, (t) => void seen.push(t.payload.i)),
    ]);
    await app.submit.submitOrderedMany('bbo', Array.from({ length: 501 }, (_, i) => ({ key: 'k', payload: { i } })));
    await waitFor(async () => seen.length >= 501, { timeoutMs: 20_000, message: 'every item run' });
    expect(seen).toEqual(Array.from({ length: 501 }, (_, i) => i));
  });

  it.each([249, 250, 251, 500, 501])("a flow node of %i dependencies gets every dependency's result", async (n) => {
    let results: Record<string, unknown> | undefined;
    const app = await start(options('bb-context'), [
      workerClass<{ ref: string }>('bbf', { concurrency: 50 }, (t) => {
        if (t.flow!.ref === 'sink') results = t.flow!.results;
        return t.flow!.ref;
      }),
    ]);
    const deps = Array.from({ length: n }, (_, i) => `d${i}`);
    await app.app.get(TaskFlowService).submitFlow([
      ...deps.map((ref) => ({ ref, type: 'bbf', payload: { ref } })),
      { ref: 'sink', type: 'bbf', payload: { ref: 'sink' }, dependsOn: deps },
    ]);
    await waitFor(async () => results, { timeoutMs: 30_000, message: 'the sink ran' });
    expect(results).toEqual(Object.fromEntries(deps.map((ref) => [ref, ref])));
  });

  it.each([99, 100, 101, 500, 501, 502])('getFlow of a flow of %i nodes lists each once, completed, with its result', async (n) => {
    const app = await start(options('bb-read'), [workerClass('bbr', { concurrency: 50 }, (t) => t.flow!.ref)]);
    const flows = app.app.get(TaskFlowService);
    const refs = Array.from({ length: n }, (_, i) => `n${i}`);
    const { id } = await flows.submitFlow(refs.map((ref, i) => ({ ref, type: 'bbr', payload: {}, dependsOn: i === 0 ? [] : ['n0'] })));
    await waitFor(async () => (await flows.getFlow(id))?.state === 'completed', { timeoutMs: 30_000, message: 'the flow completed' });
    const flow = (await flows.getFlow(id))!;
    expect(flow.counts).toMatchObject({ total: n, completed: n });
    expect(flow.nodes.map((node) => node.ref).sort()).toEqual([...refs].sort());
    for (const node of flow.nodes) expect([node.ref, node.state, node.result]).toEqual([node.ref, 'completed', node.ref]);
  });

  it.each([999, 1000, 1001])('purgeDead of %i dead letters: the count, none left', async (n) => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const app = await start(options('bb-purge'), [workerClass('bbd', { concurrency: 100, maxAttempts: 1 }, () => {
      throw new Error('dies');
    })]);
    await app.submit.submitMany('bbd', Array.from({ length: n }, (_, i) => ({ id: `d${i}`, payload: {} })));
    await waitFor(async () => (await app.inspect.getCounts('bbd')).dead === n, { timeoutMs: 20_000, message: 'every task dead' });
    expect(await app.control.purgeDead('bbd')).toBe(n);
    expect(await app.inspect.getCounts('bbd')).toMatchObject({ dead: 0 });
    expect(await app.inspect.listDead('bbd')).toEqual({ tasks: [], total: 0 });
  });

  it.each([999, 1000, 1001, 2001])('%i ready tasks paged by 1,000: each on exactly one page, in order, the last page without a cursor', async (n) => {
    const app = await start({ ...options('bb-pages'), workers: false, types: { bbp: {} } });
    const ids = Array.from({ length: n }, (_, i) => `p${String(i).padStart(5, '0')}`);
    for (let i = 0; i < n; i += 1000) await app.submit.submitMany('bbp', ids.slice(i, i + 1000).map((id) => ({ id, payload: {} })));
    const listed: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await app.inspect.listTaskPage('bbp', 'ready', { cursor, limit: 1000 });
      listed.push(...page.tasks.map((t) => t.id));
      cursor = page.next ?? undefined;
      pages++;
      expect(pages).toBeLessThanOrEqual(Math.ceil(n / 1000) + 1);
    } while (cursor);
    expect(listed).toEqual(ids);
  });
});
