/**
 * Service mode with `service.url`: a `submitMany` of more than 500 tasks. TaskSubmitService sends it in chunks
 * of 500 (SUBMIT_CHUNK), and RemoteDelayQueueStore splits each chunk into calls no larger than
 * `service.maxRequestBytes`, each written by the scheduler on its own (all or nothing). A call of the second
 * chunk after its first is lost (the test's HTTP relay in front of the scheduler drops it): the store's
 * SubmitIncompleteError says which items of the chunk were written, and the submit's SubmitIncompleteError must
 * carry those results (not mark the whole chunk as unwritten), so that repeating only the unwritten items, even
 * without ids, creates every task exactly once. The `submitted` count (metrics) includes the tasks of the part
 * of the chunk that was written, and, for a submit of one chunk (30 tasks, the store's error as it is), those too.
 * See test/service-url-split-submit.e2e-spec.ts for the crash between calls of one chunk.
 */
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import * as http from 'http';
import type { AddressInfo } from 'net';
import { DistributedQueueModule, SchedulerRequestError, SubmitIncompleteError, TaskSubmitService, type SubmitResult } from 'nestjs-distributed-queue';
import { TaskEventBus } from 'nestjs-distributed-queue/events/task-event-bus';
import { killAllChildren } from './support/child';
import { startQueueApp, workerClass, type QueueApp } from './support/queue-app';
import { SERVICE_SECRET, startScheduler, type HttpChild } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';

const target = getTargets()[0];

const PAYLOAD_LIMIT = 10_000;
/** The smallest request limit the payload limit allows (one task and 64 KiB). */
const REQUEST_LIMIT = PAYLOAD_LIMIT + 64 * 1024;

/** Tasks in a submit call's body (each task has one `"due":` field; payloads are escaped strings). */
const tasksInBody = (body: string): number => body.split('"due":').length - 1;

/**
 * An HTTP relay to the scheduler that drops the connection of the submit call number `dropCall` (1-based)
 * without forwarding it, and forwards every other call as it is; `forwarded` lists the tasks of each submit
 * call it forwarded (and the scheduler answered).
 */
async function startRelay(scheduler: HttpChild): Promise<{ url: string; dropCall: number; submits: number; forwarded: number[]; close(): Promise<void> }> {
  const relay = {
    url: '',
    dropCall: 0,
    submits: 0,
    forwarded: [] as number[],
    close: (): Promise<void> => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const submit = body.includes('"op":"submit"');
      if (submit && ++relay.submits === relay.dropCall) return void res.socket?.destroy();
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length', 'transfer-encoding'].includes(k))) as Record<string, string>;
      fetch(`${scheduler.url}${req.url}`, { method: req.method, headers, body }).then(
        async (answer) => {
          const text = await answer.text();
          if (submit && answer.status === 200) relay.forwarded.push(tasksInBody(body));
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
          res.end(text);
        },
        () => res.socket?.destroy(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  relay.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return relay;
}

// NOTE: one scheduler child process for both tests (started first, slow on a loaded machine).
jest.setTimeout(55_000);

describe('service.url, a submitMany of several chunks whose later chunk is split and cut', () => {
  let scheduler: HttpChild;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let app: INestApplication;
  let producer: QueueApp;
  let submitted = 0;
  const prefix = uniquePrefix('svc-url-split-many');

  beforeAll(async () => {
    scheduler = await startScheduler(target, prefix);
    relay = await startRelay(scheduler);
    producer = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: { bulk: {}, small: {} } });
    @Module({
      imports: [
        DistributedQueueModule.forRoot({
          mode: 'service',
          maxPayloadBytes: PAYLOAD_LIMIT,
          service: { appName: 'shop', secret: SERVICE_SECRET, publicUrl: 'http://127.0.0.1:1', instanceId: 'shop-many', url: relay.url, maxRequestBytes: REQUEST_LIMIT },
        }),
      ],
      providers: [workerClass('bulk', {}, () => 1), workerClass('small', {}, () => 1)],
    })
    class SplitManyModule {}
    app = await NestFactory.create(SplitManyModule, { logger: false, abortOnError: false });
    await app.init();
    app.get(TaskEventBus).onSubmitted((_type, created) => (submitted += created));
  }, 50_000);

  afterAll(async () => {
    await app?.close();
    await producer?.close();
    await relay?.close();
    scheduler?.kill('SIGTERM');
    await scheduler?.exited;
    await killAllChildren();
  });

  it('1000 tasks without ids, a call of the second chunk lost after its first: the error names every written item, the submitted count includes them, repeating the rest creates each task once', async () => {
    const submit = app.get(TaskSubmitService);
    const total = 1000;
    // About 190 tasks of ~370 bytes per call: the first chunk (500) in 3 calls, the second in 3 more; the
    // 5th call (the second of the second chunk) is lost.
    const items = Array.from({ length: total }, (_, i) => ({ payload: { n: i, pad: 'x'.repeat(300) }, delay: 60_000 }));
    relay.dropCall = relay.submits + 5;
    relay.forwarded = [];
    submitted = 0;
    const error = await submit.submitMany('bulk', items).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SubmitIncompleteError);
    const { results, cause } = error as SubmitIncompleteError<SubmitResult>;
    expect(relay.forwarded).toHaveLength(4);
    const written = relay.forwarded.reduce((a, b) => a + b, 0);
    // The 4th call is the first of the second chunk: the cut falls inside a chunk, after part of it was written.
    expect(relay.forwarded.slice(0, 3).reduce((a, b) => a + b, 0)).toBe(500);
    expect(written).toBeGreaterThan(500);
    expect(written).toBeLessThan(total);

    expect(results).toHaveLength(total);
    expect(results.slice(0, written).every((r) => r?.created === true)).toBe(true);
    expect(results.slice(written).every((r) => r === undefined)).toBe(true);
    expect((error as Error).message).toContain(`${written} written, ${total - written} not`);
    // The scheduler's failure itself, not the store's error wrapped once more.
    expect(cause).toBeInstanceOf(SchedulerRequestError);
    expect((await producer.inspect.getCounts('bulk')).delayed).toBe(written);
    expect(submitted).toBe(written);

    // Repeating only the items not written, without ids: each task exists once.
    const rest = await submit.submitMany('bulk', items.filter((_, i) => results[i] === undefined));
    expect(rest.every((r) => r.created)).toBe(true);
    const ids = [...results.slice(0, written).map((r) => r!.id), ...rest.map((r) => r.id)];
    expect(new Set(ids).size).toBe(total);
    expect((await producer.inspect.getCounts('bulk')).delayed).toBe(total);
    expect(submitted).toBe(total);
  });

  it('30 tasks (one chunk) split into calls, the second lost: the submitted count includes the first call\'s tasks', async () => {
    const submit = app.get(TaskSubmitService);
    const total = 30;
    // About 7 tasks of 9 kB per call.
    const items = Array.from({ length: total }, (_, i) => ({ payload: { n: i, pad: 'x'.repeat(9000) }, delay: 60_000 }));
    relay.dropCall = relay.submits + 2;
    relay.forwarded = [];
    submitted = 0;
    const error = await submit.submitMany('small', items).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SubmitIncompleteError);
    const { results } = error as SubmitIncompleteError<SubmitResult>;
    expect(relay.forwarded).toHaveLength(1);
    const written = relay.forwarded[0];
    expect(written).toBeGreaterThan(1);
    expect(results).toHaveLength(total);
    expect(results.slice(0, written).every((r) => r?.created === true)).toBe(true);
    expect(results.slice(written).every((r) => r === undefined)).toBe(true);
    expect((await producer.inspect.getCounts('small')).delayed).toBe(written);
    expect(submitted).toBe(written);
  });
});
