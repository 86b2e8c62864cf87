/*
 * Service mode: request sizes (issue item 21). Every hop is sized by bytes, and the library's routes take
 * bodies up to their option's limit whatever body parser the host application sets.
 * Failure matrix covered:
 * - largest inputs: a 200 kB task; 150 tasks of 60 kB due together (9 MB: split into several requests, by
 *   bytes as well as by count, none over the instance's limit); a 200 kB submit through the scheduler's API
 *   and through a service.url application's call;
 * - bad input: an API body over the scheduler's limit gets 413 as `{ error }`; a task bigger than any
 *   limit is a typed error at submit (PayloadTooLargeError), nothing written;
 * - host app settings: an application whose own global JSON parser allows 10 kB still takes the deliveries.
 */
import { PayloadTooLargeError } from 'nestjs-distributed-queue';
import { api, command, runs, startClient, startScheduler, type HttpChild } from './support/service-mode';
import { startQueueApp, useAppsAndChildren } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const liveInstances = async (scheduler: HttpChild, app: string): Promise<number> =>
  (await api(scheduler, 'GET', '/api/apps')).body.find((x: { app: string }) => x.app === app)?.instances.length ?? 0;

const states = (scheduler: HttpChild, type: string, ids: string[]): Promise<string[]> =>
  Promise.all(ids.map(async (id) => (await api(scheduler, 'GET', `/api/tasks/${type}/${id}`)).body.state as string));

const blob = (bytes: number): string => 'x'.repeat(bytes);

// NOTE: each test starts several child processes, whose start is slow on a loaded machine.
jest.setTimeout(180_000);

describe.each(getTargets().map((t) => [t.name, t] as const))('service mode request sizes on %s', (_name, target) => {
  const apps = useAppsAndChildren();

  it('delivers a 200 kB task and 150 tasks of 60 kB due together (split by bytes), to an app whose own JSON parser allows 10 kB', async () => {
    const prefix = uniquePrefix('svc-sizes');
    const options = { concurrency: 200, maxAttempts: 1 };
    const [scheduler, client] = await Promise.all([
      startScheduler(target, prefix),
      startClient(target, prefix, { app: 'shop', instance: 'shop-a', types: ['big'], workerOptions: options, env: { DQ_APP_JSON_LIMIT: '10kb' } }),
    ]);
    await waitFor(async () => (await liveInstances(scheduler, 'shop')) === 1, { timeoutMs: 10_000 });
    const producer = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: { big: {} } });
    apps.push(producer);
    await producer.submit.submit('big', { blob: blob(200_000) }, { id: 'one' });
    const ids = Array.from({ length: 150 }, (_, i) => `b${i}`);
    const runAt = Date.now() + 1500;
    await producer.submit.submitMany('big', ids.map((id) => ({ id, runAt, payload: { blob: blob(60_000) } })));
    const all = ['one', ...ids];
    await waitFor(async () => (await states(scheduler, 'big', all)).every((s) => s === 'done' || s === 'dead'), { timeoutMs: 30_000, message: 'every task ended' });
    expect((await api(scheduler, 'GET', '/api/dead/big')).body.total).toBe(0);
    expect(runs(client, 'done').map((r) => r.id).sort()).toEqual([...all].sort());
    // Past service.maxRequestBytes (4 MiB by default) the callback answers 413 in the library's shape, unread.
    const body = JSON.stringify({ deliveries: [{ type: 'big', id: 'huge', attempt: 1, dueAt: Date.now(), payload: blob(4 * 1024 * 1024), timeoutMs: 1000 }] });
    const refused = await fetch(`${client.url}/dq/deliveries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(refused.status).toBe(413);
    expect(await refused.json()).toEqual({ ok: false, error: { name: 'PayloadTooLargeError', message: 'the body is larger than 4194304 bytes' } });
  });

  it('the scheduler API takes a 200 kB payload; a body over its limit gets 413 as { error }', async () => {
    const prefix = uniquePrefix('svc-api-size');
    const [scheduler, client] = await Promise.all([
      startScheduler(target, prefix, { env: { SCHEDULER_MAX_REQUEST_BYTES: String(2 * 1024 * 1024) } }),
      startClient(target, prefix, { app: 'shop', instance: 'shop-a', types: ['big'] }),
    ]);
    await waitFor(async () => (await liveInstances(scheduler, 'shop')) === 1, { timeoutMs: 10_000 });
    expect(await api(scheduler, 'POST', '/api/tasks', { type: 'big', id: 'api-big', payload: { blob: blob(200_000) } })).toEqual({ status: 201, body: { id: 'api-big' } });
    await waitFor(() => runs(client, 'done').some((r) => r.id === 'api-big'), { timeoutMs: 10_000, message: 'the 200 kB task ran' });
    const tooBig = await api(scheduler, 'POST', '/api/tasks', { type: 'big', id: 'huge', payload: { blob: blob(3 * 1024 * 1024) } });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body).toEqual({ error: { name: 'PayloadTooLargeError', message: expect.stringMatching(/2097152 bytes/) } });
    expect((await api(scheduler, 'GET', '/api/tasks/big/huge')).body.state).toBe('unknown');
  });

  it('an application with a small maxRequestBytes: deliveries split to fit it; the API refuses a payload too big for it (PayloadTooLargeError)', async () => {
    const prefix = uniquePrefix('svc-small-limit');
    const env = { DQ_MAX_PAYLOAD_BYTES: '10000', DQ_MAX_REQUEST_BYTES: String(10_000 + 64 * 1024) };
    const [scheduler, client] = await Promise.all([
      startScheduler(target, prefix),
      startClient(target, prefix, { app: 'shop', instance: 'shop-a', types: ['small'], workerOptions: { concurrency: 50, maxAttempts: 1 }, env }),
    ]);
    await waitFor(async () => (await liveInstances(scheduler, 'shop')) === 1, { timeoutMs: 10_000 });
    // 40 tasks of 9 kB due together: 360 kB, at most 8 per request of 75,536 bytes.
    const ids = Array.from({ length: 40 }, (_, i) => `s${i}`);
    const runAt = Date.now() + 1500;
    for (const id of ids) expect((await api(scheduler, 'POST', '/api/tasks', { type: 'small', id, runAt, payload: { blob: blob(9000) } })).status).toBe(201);
    await waitFor(async () => (await states(scheduler, 'small', ids)).every((s) => s === 'done' || s === 'dead'), { timeoutMs: 20_000, message: 'every task ended' });
    expect((await api(scheduler, 'GET', '/api/dead/small')).body.total).toBe(0);
    expect(runs(client, 'done').map((r) => r.id).sort()).toEqual([...ids].sort());
    const tooBig = await api(scheduler, 'POST', '/api/tasks', { type: 'small', id: 'big', payload: { blob: blob(70_000) } });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error.name).toBe('PayloadTooLargeError');
    expect((await api(scheduler, 'GET', '/api/tasks/small/big')).body.state).toBe('unknown');
  });

  it('a service.url application submits a 200 kB task through the scheduler; one over its limits is PayloadTooLargeError at submit', async () => {
    const prefix = uniquePrefix('svc-url-size');
    const scheduler = await startScheduler(target, prefix);
    const client = await startClient(target, prefix, { app: 'mail', instance: 'mail-a', types: ['mail.big'], schedulerUrl: scheduler.url });
    await waitFor(async () => (await liveInstances(scheduler, 'mail')) === 1, { timeoutMs: 10_000 });
    expect(await command(client, 'submit', { taskType: 'mail.big', id: 'm1', payload: { blob: blob(200_000) } })).toBe('m1');
    await waitFor(() => runs(client, 'done').some((r) => r.id === 'm1'), { timeoutMs: 10_000, message: 'the 200 kB task ran' });
    await expect(command(client, 'submit', { taskType: 'mail.big', id: 'm2', payload: { blob: blob(1024 * 1024) } })).rejects.toMatchObject({ name: PayloadTooLargeError.name });
    expect((await api(scheduler, 'GET', '/api/tasks/mail.big/m2')).body.state).toBe('unknown');
  });
});
