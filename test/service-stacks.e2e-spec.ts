/*
 * Service mode: a failed attempt keeps the stack of the application's handler (issue 26 item 5). The
 * application sends it back in the delivery's result line (bounded there); the scheduler bounds it again
 * and keeps it in the dead letter, the type's event stream entry and its own log line. A thrown string
 * has no stack. In-process delivery paths: failure-stacks.e2e-spec.ts. The error's name comes back too: an
 * application handler's UnrecoverableError dead-letters its task at once in the scheduler.
 */
import { MAX_STACK_BYTES } from 'nestjs-distributed-queue';
import { connect, keysOf, useAppsAndChildren } from './support/queue-app';
import { api, startClient, startScheduler, type HttpChild } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

// NOTE: each test starts child processes, whose start is slow on a loaded machine.
jest.setTimeout(180_000);

const liveInstances = async (scheduler: HttpChild, app: string): Promise<number> =>
  (await api(scheduler, 'GET', '/api/apps')).body.find((x: { app: string }) => x.app === app)?.instances.length ?? 0;

describe.each(getTargets().map((t) => [t.name, t] as const))('service mode failure stacks on %s', (_name, target) => {
  useAppsAndChildren();

  it("the application's stack comes back with a failed delivery: in the dead letter, the event entry and the scheduler's log", async () => {
    const prefix = uniquePrefix('svc-stacks');
    const [scheduler] = await Promise.all([
      startScheduler(target, prefix),
      startClient(target, prefix, { app: 'shop', instance: 'shop-a', types: ['charge'], workerOptions: { maxAttempts: 1 } }),
    ]);
    await waitFor(async () => (await liveInstances(scheduler, 'shop')) === 1, { timeoutMs: 15_000, message: 'the instance registered' });
    const tasks = { named: { fail: true }, huge: { fail: true, stackLines: 5000 }, str: { fail: 'string' } };
    for (const [id, payload] of Object.entries(tasks)) expect((await api(scheduler, 'POST', '/api/tasks', { type: 'charge', id, payload })).status).toBe(201);
    const dead = await waitFor(async () => {
      const page = (await api(scheduler, 'GET', '/api/dead/charge')).body as { tasks: { id: string; error: { name: string; message: string; stack?: string } }[] };
      return page.tasks.length === 3 ? new Map(page.tasks.map((t) => [t.id, t.error])) : null;
    }, { timeoutMs: 30_000, message: 'every task dead' });

    const named = dead.get('named')!;
    expect(named.message).toMatch(/told to fail \(attempt 1\)$/);
    // The application's stack, not the scheduler's: it names the fixture's function and file.
    expect(named.stack).toMatch(/^Error: told to fail \(attempt 1\)\n {4}at failAsTold .*service-client-app\.ts/);
    const huge = dead.get('huge')!.stack!;
    expect(Buffer.byteLength(huge)).toBeLessThanOrEqual(MAX_STACK_BYTES);
    expect(huge).toMatch(/^Error: told to fail \(attempt 1\)\n {4}at failAsTold0 [^]*\n {4}\.\.\. \d+ more lines$/);
    expect(dead.get('str')).toEqual({ name: 'DeliveryFailedError', message: expect.stringContaining('Error: told to fail (attempt 1)'), attempts: 1, failedAt: expect.any(Number), instance: 'shop-a' });

    // The type's event stream: the `dead` entries carry the same stack.
    const redis = connect(target);
    try {
      const entries = await redis.xrange(keysOf(prefix, 'charge').log, '-', '+');
      const stacks = new Map<string, string | undefined>();
      for (const [, fields] of entries) {
        const f = new Map(fields.reduce<[string, string][]>((pairs, v, i) => (i % 2 ? pairs : [...pairs, [v, fields[i + 1]]]), []));
        if (f.get('e') !== 'dead') continue;
        const ids = JSON.parse(f.get('ids')!) as string[];
        const errs = JSON.parse(f.get('err')!) as { stack?: string }[];
        ids.forEach((id, i) => stacks.set(id, errs[i].stack));
      }
      expect(stacks).toEqual(new Map([['named', named.stack], ['huge', huge], ['str', undefined]]));
    } finally {
      redis.disconnect();
    }
    await waitFor(() => scheduler.output().includes('at failAsTold '), { timeoutMs: 10_000, message: "the application's stack in the scheduler's log" });
  });

  it("an application handler's UnrecoverableError dead-letters the task after one attempt; another error is retried", async () => {
    const prefix = uniquePrefix('svc-unrec');
    const [scheduler] = await Promise.all([
      startScheduler(target, prefix),
      startClient(target, prefix, { app: 'shop', instance: 'shop-a', types: ['charge'], workerOptions: { maxAttempts: 3, backoff: { type: 'fixed', delayMs: 300, jitter: 0 } } }),
    ]);
    await waitFor(async () => (await liveInstances(scheduler, 'shop')) === 1, { timeoutMs: 15_000, message: 'the instance registered' });
    for (const [id, payload] of Object.entries({ unrec: { fail: 'unrecoverable' }, flaky: { fail: true } })) {
      expect((await api(scheduler, 'POST', '/api/tasks', { type: 'charge', id, payload })).status).toBe(201);
    }
    const dead = await waitFor(async () => {
      const page = (await api(scheduler, 'GET', '/api/dead/charge')).body as { tasks: { id: string; error: { name: string; message: string; attempts: number } }[] };
      return page.tasks.length === 2 ? new Map(page.tasks.map((t) => [t.id, t.error])) : null;
    }, { timeoutMs: 30_000, message: 'both tasks dead' });
    expect(dead.get('unrec')).toMatchObject({ name: 'DeliveryFailedError', attempts: 1, message: expect.stringContaining('UnrecoverableError: told not to retry (attempt 1)') });
    expect(dead.get('flaky')).toMatchObject({ attempts: 3, message: expect.stringContaining('told to fail (attempt 3)') });
  });
});
