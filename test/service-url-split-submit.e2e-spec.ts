/**
 * Service mode with `service.url`: a `submitMany` too big for one call to the scheduler is split into calls
 * `<requestId>`, `<requestId>.1`, ... (RemoteDelayQueueStore), each written by the scheduler on its own. The
 * application is SIGKILLed once the first call is answered (a hook preloaded into it:
 * test/fixtures/service-crash-hook.js), then started again and submits the same items again.
 *
 * Failure matrix cell (docs/failure-matrix.md, section 5, service mode):
 * | Crash: `service.url` app between split submit calls | the first call's tasks are written, the later ones not; the retried submit |
 * |                                                     | (a new process: new request ids) creates none of the first call's tasks     |
 * |                                                     | again (created: false, by their ids) and the rest once; each runs once      |
 * The same cut in a process that lives on (a call after the first gets no answer: the test's HTTP relay in front
 * of the scheduler drops it): the submit rejects with SubmitIncompleteError saying which items were written
 * (the calls are all or nothing each, as with Redis), so the application repeats only the others, even
 * without ids: every task exists once.
 * What holds is per task id: the retry is recognised by the ids the application gives (a task without an id
 * gets a new one in each submit, so only a submit with ids can be repeated safely), while the tasks wait or run
 * (a done task's id may be submitted again: here they wait, delayed 60 s, until the retry is made).
 */
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as path from 'path';
import { DistributedQueueModule, SchedulerRequestError, SubmitIncompleteError, TaskSubmitService, type SubmitResult } from 'nestjs-distributed-queue';
import { REPO_ROOT, spawnChild, type ChildHandle } from './support/child';
import { startQueueApp, useAppsAndChildren, workerClass } from './support/queue-app';
import { getFreePort } from './support/redis-server';
import { api, runs, SERVICE_SECRET, startScheduler, type HttpChild } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const target = getTargets()[0];

const PAYLOAD_LIMIT = 10_000;
/** The smallest request limit the payload limit allows (one task and 64 KiB): about 7 tasks of 9 kB per call. */
const REQUEST_LIMIT = PAYLOAD_LIMIT + 64 * 1024;
const TASKS = 30;

/** A `service.url` application instance of test/fixtures/service-url-submitter.ts; `crash`: killed after its first submit call. */
async function startSubmitter(scheduler: HttpChild, port: number, crash: boolean): Promise<ChildHandle> {
  const child = spawnChild('test/fixtures/service-url-submitter.ts', {
    DQ_SCHEDULER_URL: scheduler.url,
    DQ_APP: 'shop',
    DQ_SECRET: SERVICE_SECRET,
    DQ_PORT: String(port),
    DQ_INSTANCE: 'shop-a',
    DQ_TYPES: 'bulk',
    DQ_WORKER_OPTIONS: JSON.stringify({ concurrency: 8 }),
    DQ_MAX_PAYLOAD_BYTES: String(PAYLOAD_LIMIT),
    DQ_MAX_REQUEST_BYTES: String(REQUEST_LIMIT),
    ...(crash ? { DQ_CRASH_AT: 'after-submit-call', NODE_OPTIONS: `--require ${path.join(REPO_ROOT, 'test/fixtures/service-crash-hook.js')}` } : {}),
  });
  await child.waitForMessage((m) => m.type === 'ready', 90_000);
  return child;
}

/**
 * An HTTP relay to the scheduler's client endpoint that drops the connection of the submit call number `dropCall`
 * (1-based) without forwarding it, and forwards every other call as it is (signed headers and body).
 */
async function startRelay(scheduler: HttpChild, dropCall: number): Promise<{ url: string; submits: number; close(): Promise<void> }> {
  let submits = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (body.includes('"op":"submit"') && ++submits === dropCall) return void res.socket?.destroy();
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length', 'transfer-encoding'].includes(k))) as Record<string, string>;
      fetch(`${scheduler.url}${req.url}`, { method: req.method, headers, body }).then(
        async (answer) => {
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
          res.end(await answer.text());
        },
        () => res.socket?.destroy(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get submits() {
      return submits;
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

// NOTE: three child processes start in turn, each slow on a loaded machine.
jest.setTimeout(85_000);

describe('service.url, a split submit cut by a crash', () => {
  useAppsAndChildren();

  it('an application SIGKILLed after the first of several submit calls: the retried submit creates none of the written tasks again, the rest once; each runs once', async () => {
    const prefix = uniquePrefix('svc-url-split');
    const scheduler = await startScheduler(target, prefix);
    const port = await getFreePort();
    const items = Array.from({ length: TASKS }, (_, i) => ({ id: `b${i}`, payload: { pad: 'x'.repeat(9000) }, delay: 60_000 }));

    const first = await startSubmitter(scheduler, port, true);
    first.send({ cmd: 'submitMany', ref: 1, taskType: 'bulk', items });
    const hook = await first.waitForMessage((m) => m.type === 'crash-hook', 30_000);
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(first.messages.some((m) => m.type === 'reply')).toBe(false);
    // The first call was answered: its tasks were created; the later calls were never made.
    expect(hook.detail.status).toBe(200);
    const written: { id: string; created: boolean }[] = JSON.parse(hook.detail.answer).result;
    expect(written.length).toBeGreaterThan(1);
    expect(written.length).toBeLessThan(TASKS / 2);
    expect(written).toEqual(items.slice(0, written.length).map((t) => ({ id: t.id, created: true })));
    const stateOf = async (id: string): Promise<string> => (await api(scheduler, 'GET', `/api/tasks/bulk/${id}`)).body.state;
    expect(await stateOf(items[0].id)).toBe('delayed');
    expect(await stateOf(items[written.length - 1].id)).toBe('delayed');
    expect(await stateOf(items[written.length].id)).toBe('unknown');
    expect(await stateOf(items[TASKS - 1].id)).toBe('unknown');

    // Started again (same instance, same URL), it submits the same items again.
    const second = await startSubmitter(scheduler, port, false);
    second.send({ cmd: 'submitMany', ref: 2, taskType: 'bulk', items });
    const reply = await second.waitForMessage((m) => m.type === 'reply' && m.ref === 2, 30_000);
    expect(reply.error).toBeUndefined();
    expect(reply.result).toEqual(items.map((t, i) => ({ id: t.id, created: i >= written.length })));

    // Due now: each runs once.
    for (const { id } of items) expect((await api(scheduler, 'POST', `/api/tasks/bulk/${id}/reschedule`, { delay: 0 })).body).toEqual({ rescheduled: true });
    await waitFor(async () => (await Promise.all(items.map((t) => stateOf(t.id)))).every((s) => s === 'done'), {
      timeoutMs: 30_000, message: 'every task done',
    });
    expect(runs(second).map((r) => r.id).sort()).toEqual(items.map((t) => t.id).sort());
    expect(runs(second).every((r) => r.attempt === 1)).toBe(true);
    expect(runs(first)).toHaveLength(0);
  });

  it('a later call of a split submit lost in a live application: SubmitIncompleteError names the written items; repeating the others, even without ids, creates each task once', async () => {
    const prefix = uniquePrefix('svc-url-split-live');
    const scheduler = await startScheduler(target, prefix);
    const relay = await startRelay(scheduler, 2);
    let app: INestApplication | undefined;
    const producer = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: { bulk: {} } });
    try {
      @Module({
        imports: [
          DistributedQueueModule.forRoot({
            mode: 'service',
            maxPayloadBytes: PAYLOAD_LIMIT,
            service: { appName: 'shop', secret: SERVICE_SECRET, publicUrl: 'http://127.0.0.1:1', instanceId: 'shop-live', url: relay.url, maxRequestBytes: REQUEST_LIMIT },
          }),
        ],
        providers: [workerClass('bulk', {}, () => 1)],
      })
      class SplitModule {}
      app = await NestFactory.create(SplitModule, { logger: false, abortOnError: false });
      await app.init();
      const submit = app.get(TaskSubmitService);
      // No ids: only the error can tell the application which tasks exist.
      const items = Array.from({ length: TASKS }, (_, i) => ({ payload: { n: i, pad: 'x'.repeat(9000) }, delay: 60_000 }));
      const error = await submit.submitMany('bulk', items).catch((e: unknown) => e);
      expect(relay.submits).toBe(2);
      expect(error).toBeInstanceOf(SubmitIncompleteError);
      const { results, cause } = error as SubmitIncompleteError<SubmitResult>;
      expect(cause).toBeInstanceOf(SchedulerRequestError);
      expect(results).toHaveLength(TASKS);
      const written = results.findIndex((r) => r === undefined);
      expect(written).toBeGreaterThan(1);
      expect(results.slice(0, written).every((r) => r?.created === true)).toBe(true);
      expect(results.slice(written).every((r) => r === undefined)).toBe(true);

      const rest = await submit.submitMany('bulk', items.filter((_, i) => results[i] === undefined));
      expect(rest.every((r) => r.created)).toBe(true);
      const ids = [...results.slice(0, written).map((r) => r!.id), ...rest.map((r) => r.id)];
      expect(new Set(ids).size).toBe(TASKS);
      expect((await producer.inspect.getCounts('bulk')).delayed).toBe(TASKS);
    } finally {
      await app?.close();
      await producer.close();
      await relay.close();
      scheduler.kill('SIGTERM');
      await scheduler.exited;
    }
  });
});
