import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { InvalidSubmitOptionsError, type Task } from 'nestjs-distributed-queue';
import { routeKeys } from 'nestjs-distributed-queue/route/route-keys';
import { killAllChildren, spawnChild, type ChildHandle } from './support/child';
import { keysOf, useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { installTracing, reportOf, type SpanReport } from './support/tracing';
import { waitFor } from './support/wait';

const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/;

/** Runs `fn` and returns the one publish span it made. */
async function publishOf(exporter: InMemorySpanExporter, fn: () => Promise<unknown>): Promise<SpanReport> {
  const before = exporter.getFinishedSpans().length;
  await fn();
  const made = exporter.getFinishedSpans().slice(before).map(reportOf).filter((s) => s.name.endsWith(' publish'));
  expect(made).toHaveLength(1);
  return made[0];
}

/** Runs `fn` as the active span `name`; returns its report and `fn`'s value once the span ended. */
async function underSpan<T>(exporter: InMemorySpanExporter, name: string, fn: () => Promise<T>): Promise<{ root: SpanReport; value: T }> {
  const value = await trace.getTracer('test').startActiveSpan(name, async (span: Span) => {
    try {
      return await fn();
    } finally {
      span.end();
    }
  });
  return { root: exporter.getFinishedSpans().map(reportOf).find((s) => s.name === name)!, value };
}

describe.each(getTargets().map((t) => [t.name, t] as const))('tracing on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  let exporter: InMemorySpanExporter;
  let uninstall: () => Promise<void>;
  beforeAll(() => {
    ({ exporter, uninstall } = installTracing());
  });
  afterAll(() => uninstall());
  beforeEach(() => exporter.reset());
  afterEach(() => killAllChildren());

  it('a run in another process is a child of its submit span, for delay, delayed, ordered and delayed ordered tasks', async () => {
    const prefix = uniquePrefix('tracing');
    const qId = 'q-trace';
    const app = await start({
      connection: target.connection, keyPrefix: prefix, workers: false, tracing: true,
      types: { 'tr.delay': {}, 'tr.ordered': { ordered: true } }, route: routeTestOptions(qId, 'producer', 2),
    });
    const child: ChildHandle = spawnChild('test/fixtures/traced-app.ts', { DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_QID: qId });
    await child.waitForMessage((m) => m.type === 'ready', 30_000);

    const { submit, inspect } = app;
    const published = new Map<string, SpanReport>();
    const { root } = await underSpan(exporter, 'request', async () => {
      published.set('d1', await publishOf(exporter, () => submit.submit('tr.delay', { n: 1 }, { id: 'd1' })));
      published.set('d2', await publishOf(exporter, () => submit.submit('tr.delay', { n: 2 }, { id: 'd2', delay: 300 })));
      published.set('d3', await publishOf(exporter, () => submit.submit('tr.delay', { fail: true }, { id: 'd3' })));
      const many = await publishOf(exporter, () => submit.submitMany('tr.delay', [{ id: 'd4', payload: {} }, { id: 'd5', payload: {} }]));
      published.set('d4', many).set('d5', many);
      published.set('later', await publishOf(exporter, () => submit.submit('tr.delay', { n: 'later' }, { id: 'later', delay: 60_000 })));
      published.set('o1', await publishOf(exporter, () => submit.submitOrdered('tr.ordered', 'k', { n: 1 }, { id: 'o1' })));
      published.set('o2', await publishOf(exporter, () => submit.submitOrdered('tr.ordered', 'k', { n: 2 }, { id: 'o2', delay: 300 })));
      published.set('o3', await publishOf(exporter, () => submit.submitOrderedMany('tr.ordered', [{ key: 'k2', id: 'o3', payload: { fail: true } }])));
    });

    // Publish spans: producers, children of the active span, with the messaging attributes.
    for (const [id, span] of published) {
      const type = id.startsWith('o') ? 'tr.ordered' : 'tr.delay';
      expect(span).toMatchObject({ name: `${type} publish`, kind: SpanKind.PRODUCER, traceId: root.traceId, parentSpanId: root.spanId, status: { code: SpanStatusCode.OK } });
      expect(span.attributes).toMatchObject({ 'messaging.system': 'nestjs-distributed-queue', 'messaging.destination.name': type });
      if (span !== published.get('d4')) expect(span.attributes['messaging.message.id']).toBe(id);
    }
    expect(published.get('d4')!.attributes['messaging.batch.message_count']).toBe(2);

    // Stored with the traceparent; the readers never show it.
    const rawLater = await redis().hget(keysOf(prefix, 'tr.delay').jobs, 'later');
    expect(rawLater).toContain(`^00-${root.traceId}-${published.get('later')!.spanId}-01|{"n":"later"}`);
    expect(await inspect.getTask('tr.delay', 'later')).toMatchObject({ state: 'delayed', payload: { n: 'later' } });
    expect((await inspect.listTasks('tr.delay', 'delayed')).find((t) => t.id === 'later')).toMatchObject({ payload: { n: 'later' } });

    const ids = ['d1', 'd2', 'd3', 'd4', 'd5', 'o1', 'o2', 'o3'];
    await waitFor(() => ids.every((id) => child.messages.some((m) => m.type === 'ran' && m.id === id)), { timeoutMs: 20_000, message: 'every task ran in the child' });
    for (const id of ids) {
      const ran = child.messages.find((m) => m.type === 'ran' && m.id === id);
      expect(ran.traceContext).toMatch(TRACEPARENT);
      expect(ran.traceContext).toBe(`00-${root.traceId}-${published.get(id)!.spanId}-01`);
    }

    let n = 0;
    const childSpans = async (): Promise<SpanReport[] | null> => {
      const asked = ++n;
      child.send({ type: 'spans', n: asked });
      const spans: SpanReport[] = (await child.waitForMessage((m) => m.type === 'spans' && m.n === asked, 5000)).spans;
      const processed = spans.filter((s) => s.name.endsWith(' process'));
      return ids.every((id) => processed.some((s) => s.attributes['messaging.message.id'] === id)) ? spans : null;
    };
    const spans = await waitFor(childSpans, { timeoutMs: 10_000, message: 'the child ended a process span per task' });

    for (const id of ids) {
      const ordered = id.startsWith('o');
      const type = ordered ? 'tr.ordered' : 'tr.delay';
      const run = spans.find((s) => s.name === `${type} process` && s.attributes['messaging.message.id'] === id)!;
      const submitSpan = published.get(id)!;
      expect(run).toMatchObject({ kind: SpanKind.CONSUMER, traceId: submitSpan.traceId, parentSpanId: submitSpan.spanId });
      expect(run.attributes).toMatchObject({
        'messaging.system': 'nestjs-distributed-queue', 'messaging.destination.name': type, 'messaging.distributed_queue.attempt': 1,
      });
      expect(run.attributes['messaging.distributed_queue.key']).toBe(ordered ? (id === 'o3' ? 'k2' : 'k') : undefined);
      const fails = id === 'd3' || id === 'o3';
      if (fails) {
        expect(run.status).toEqual({ code: SpanStatusCode.ERROR, message: `boom ${id}` });
        const exception = run.events.find((e) => e.name === 'exception');
        expect(exception?.attributes).toMatchObject({ 'exception.message': `boom ${id}`, 'exception.type': 'Error' });
      } else {
        expect(run.status.code).toBe(SpanStatusCode.OK);
        expect(run.events).toEqual([]);
      }
      // The handler's own span nests under its run.
      const inner = spans.find((s) => s.name === `inner ${id}`)!;
      expect(inner).toMatchObject({ traceId: run.traceId, parentSpanId: run.spanId });
    }

    // The dead letter reads without the trace context too.
    const dead = await waitFor(async () => ((await inspect.listDead('tr.delay')).tasks.find((t) => t.id === 'd3')), { message: 'd3 is dead' });
    expect(dead.payload).toEqual({ fail: true });
    expect(dead.raw).toBeUndefined();
    expect(await inspect.listTasks('tr.delay', 'dead')).toMatchObject([{ id: 'd3', payload: { fail: true } }]);
    const orderedDead = await waitFor(async () => (await inspect.listOrderedDead()).find((t) => t.id === 'o3'), { message: 'o3 is dead' });
    expect(orderedDead.payload).toEqual({ fail: true });

    // Re-driven dead letters keep their trace context.
    expect(await inspect.redriveDead('tr.delay', ['d3'])).toBe(1);
    expect(await inspect.redriveOrderedDead()).toBe(1);
    const runsOf = (id: string) => child.messages.filter((m) => m.type === 'ran' && m.id === id);
    await waitFor(() => runsOf('d3').length === 2 && runsOf('o3').length === 2, { timeoutMs: 10_000, message: 're-driven tasks ran again' });
    for (const id of ['d3', 'o3']) {
      expect(runsOf(id).map((m) => m.traceContext)).toEqual(Array(2).fill(`00-${root.traceId}-${published.get(id)!.spanId}-01`));
    }
  });

  it('synchronous handlers: a return ends the run span OK, a throw with ERROR; an untraced task runs in a root span', async () => {
    const prefix = uniquePrefix('tracing-sync');
    const Ok = workerClass('sync.ok', { pollIntervalMs: 100 }, () => 'done');
    const Bad = workerClass('sync.bad', { pollIntervalMs: 100, maxAttempts: 1 }, () => {
      throw new Error('sync boom');
    });
    const producer = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { 'sync.ok': {}, 'sync.bad': {} } });
    await start({ connection: target.connection, keyPrefix: prefix, tracing: true }, [Ok, Bad]);
    await producer.submit.submit('sync.ok', {}, { id: 'a' });
    await producer.submit.submit('sync.bad', {}, { id: 'b' });
    const spans = await waitFor(() => {
      const runs = exporter.getFinishedSpans().map(reportOf);
      return runs.length === 2 ? runs : null;
    }, { message: 'two process spans' });
    const ok = spans.find((s) => s.name === 'sync.ok process')!;
    expect(ok).toMatchObject({ kind: SpanKind.CONSUMER, parentSpanId: undefined, status: { code: SpanStatusCode.OK }, events: [] });
    expect(ok.attributes).toMatchObject({ 'messaging.message.id': 'a', 'messaging.distributed_queue.attempt': 1 });
    const bad = spans.find((s) => s.name === 'sync.bad process')!;
    expect(bad).toMatchObject({ parentSpanId: undefined, status: { code: SpanStatusCode.ERROR, message: 'sync boom' } });
    expect(bad.events).toMatchObject([{ name: 'exception', attributes: { 'exception.message': 'sync boom' } }]);
    await waitFor(async () => (await producer.inspect.getState('sync.bad', 'b')) === 'dead', { message: 'b is dead' });
  });

  it('a failing submit ends its publish span with an error', async () => {
    const app = await start({
      connection: target.connection, keyPrefix: uniquePrefix('tracing-err'), workers: false, tracing: { tracerName: 'my-queue' },
      types: { 'tr.ordered': { ordered: true } }, route: routeTestOptions('q-err', 'producer', 2),
    });
    const before = exporter.getFinishedSpans().length;
    await expect(app.submit.submit('tr.ordered', { n: 1 })).rejects.toThrow(InvalidSubmitOptionsError);
    const [span] = exporter.getFinishedSpans().slice(before);
    expect(span.name).toBe('tr.ordered publish');
    expect(span.instrumentationScope.name).toBe('my-queue');
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.events.map((e) => e.name)).toEqual(['exception']);
    expect(span.events[0].attributes?.['exception.type']).toBe('InvalidSubmitOptionsError');
  });

  it('without the option: no trace context is stored and no span is made', async () => {
    const prefix = uniquePrefix('tracing-off');
    const qId = 'q-off';
    const seen: Task[] = [];
    const Worker = workerClass('plain', { pollIntervalMs: 100 }, (task) => void seen.push(task));
    const app = await start({
      connection: target.connection, keyPrefix: prefix, types: { 'plain.ordered': { ordered: true } }, route: routeTestOptions(qId, 'solo', 2),
    }, [Worker]);
    const { root } = await underSpan(exporter, 'request', async () => {
      await app.submit.submit('plain', { n: 1 }, { id: 'now' });
      await app.submit.submit('plain', { n: 2 }, { id: 'later', delay: 60_000 });
      return app.submit.submitOrdered('plain.ordered', 'k', { n: 3 }, { id: 'o' });
    });
    await waitFor(() => seen.length === 1, { message: 'the task ran' });
    expect(seen[0].traceContext).toBeUndefined();
    expect(await redis().hget(keysOf(prefix, 'plain').jobs, 'later')).toMatch(/^[A-N][0-9a-f]+\{"n":2\}$/);
    const partitions = await Promise.all([0, 1].map((p) => redis().lrange(routeKeys(prefix, qId).partition(p).list, 0, -1)));
    const items = partitions.flat();
    expect(items).toHaveLength(1);
    expect(items[0]).toMatch(/:\{"id":"o","type":"plain.ordered","key":"k","payload":\{"n":3\}\}$/);
    // Only the test's own span: no publish, no process span.
    await waitFor(async () => (await app.inspect.getState('plain', 'now')) === 'done', { message: 'the task is done' });
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual([root.name]);
  });
});
