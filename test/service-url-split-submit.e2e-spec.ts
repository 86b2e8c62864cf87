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
 * What holds is per task id: the retry is recognised by the ids the application gives (a task without an id
 * gets a new one in each submit, so only a submit with ids can be repeated safely), while the tasks wait or run
 * (a done task's id may be submitted again: here they wait, delayed 60 s, until the retry is made).
 */
import * as path from 'path';
import { REPO_ROOT, spawnChild, type ChildHandle } from './support/child';
import { useAppsAndChildren } from './support/queue-app';
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
});
