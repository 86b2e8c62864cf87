/**
 * Handlers that throw or return anything JavaScript allows, in service mode (handler-garbage covers plugin
 * mode, ordered tasks and the testing module): the instance answers each task's line, the scheduler records
 * the attempt, and the instance goes on.
 *
 * | cell | expected |
 * | every outcome of test/support/hostile-outcomes.ts, one task each, then a plain one, on one instance of concurrency 1 | the throwing ones dead (maxAttempts 1) with a name and a message of strings; the returning ones done (a result JSON cannot write is not kept); the plain one done after them; the instance alive, nothing unhandled in its output |
 */
import { OUTCOMES } from './support/hostile-outcomes';
import { startQueueApp, useAppsAndChildren } from './support/queue-app';
import { runs, startClient, startScheduler } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const NAMES = Object.keys(OUTCOMES);

describe.each(getTargets().map((t) => [t.name, t] as const))('service mode: handlers that throw or return anything on %s', (_name, target) => {
  const apps = useAppsAndChildren();

  it('each attempt is answered and recorded, typed; the instance goes on', async () => {
    const prefix = uniquePrefix('svc-garbage');
    const [, client] = await Promise.all([
      startScheduler(target, prefix),
      startClient(target, prefix, { app: 'garbage', instance: 'garbage-a', types: ['sg'], workerOptions: { maxAttempts: 1, concurrency: 1 } }),
    ]);
    const producer = await startQueueApp({ connection: target.connection, keyPrefix: prefix, workers: false, types: { sg: {} }, keepDone: 100 });
    apps.push(producer);
    for (const name of NAMES) await producer.submit.submit('sg', { outcome: name }, { id: name.replace(':', '-') });
    await producer.submit.submit('sg', {}, { id: 'after' });
    await waitFor(() => runs(client, 'done').some((r) => r.id === 'after'), { timeoutMs: 30_000, message: 'the plain task ran after every outcome' });
    await waitFor(async () => (await producer.inspect.getCounts('sg')).done === NAMES.filter((n) => n.startsWith('return:')).length + 1, { timeoutMs: 10_000, message: 'every attempt recorded' });
    const dead = await producer.inspect.listDead('sg', 0, 100);
    expect(dead.tasks.map((t) => t.id).sort()).toEqual(NAMES.filter((n) => n.startsWith('throw:')).map((n) => n.replace(':', '-')).sort());
    for (const t of dead.tasks) {
      expect([t.id, typeof t.error.name, typeof t.error.message]).toEqual([t.id, 'string', 'string']);
      expect(t.error.message.length).toBeLessThan(100_000);
    }
    for (const name of NAMES.filter((n) => n.startsWith('return:'))) expect(await producer.inspect.getTask('sg', name.replace(':', '-'))).toMatchObject({ state: 'done' });
    expect(client.output()).not.toMatch(/Unhandled|unhandled|uncaught/);
  }, 60_000);
});
