import type { Task } from 'nestjs-distributed-queue';
import { connect, useQueueApps, workerClass } from './support/queue-app';
import { checkLog, readLog, readSpans, routeTestOptions, submitLoad, useRouteMachines } from './support/route';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

const total = (lists: Map<string, unknown[]>): number => [...lists.values()].reduce((n, list) => n + list.length, 0);

describe.each(getTargets().map((t) => [t.name, t] as const))('route queue pause on %s', (_name, target: RedisTarget) => {
  const setup = useRouteMachines(target);
  const { start } = useQueueApps(target);

  it('a pause holds across 3 machines and a restart; submits go on; resume runs the rest in per-key order, once each', async () => {
    const { prefix, children, start: startMachine, submit, inspect, control } = await setup('rpause', ['m1', 'm2', 'm3'], {
      DQ_SPANS: '1', DQ_SLOW_MS: '30',
    });
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    const client = connect(target);
    try {
      await submitLoad(submit, keys, 40);
      await waitFor(async () => total(await readLog(client, prefix, keys)) >= 50, { timeoutMs: 10_000, message: 'work under way' });
      await control.pause('ledger');
      expect(await control.isPaused('ledger')).toBe(true);
      // The owners learn it at once (message) or at their next take (within one idle poll, 1 s); running
      // handlers (30 ms) finish.
      await sleep(1500);
      const atPause = total(await readLog(client, prefix, keys));
      expect(atPause).toBeLessThan(480);
      // Every task that started finished (its span is written at its end).
      expect(total(await readSpans(client, prefix, keys))).toBe(atPause);

      const more = await Promise.all(keys.map((k) => submit.submitOrdered('ledger', k, { n: 40 })));
      expect(more.map((r) => r.outcome)).toEqual(keys.map(() => 'queued'));
      await submitLoad(submit, keys, 9, 41);
      await sleep(1500);
      expect(total(await readLog(client, prefix, keys))).toBe(atPause);

      // A restarted machine finds the queue paused; so do the owners its partitions move to.
      children.get('m1')!.kill('SIGTERM');
      await children.get('m1')!.exited;
      await sleep(1000);
      await startMachine('m1');
      await sleep(2500);
      expect(total(await readLog(client, prefix, keys))).toBe(atPause);
      expect(await control.isPaused('ledger')).toBe(true);
      const counts = await inspect.getCounts('ledger');
      expect(counts.ready + counts.running).toBe(600 - atPause);

      await control.resume('ledger');
      expect(await control.isPaused('ledger')).toBe(false);
      await waitFor(async () => total(await readSpans(client, prefix, keys)) >= 600, {
        timeoutMs: 30_000, intervalMs: 200, message: 'all 600 ran after resume',
      });
      const result = checkLog(await readLog(client, prefix, keys), 50);
      expect(result).toMatchObject({ missing: 0, overtakes: 0, duplicates: 0, staleEpochs: 0 });
      expect(total(await readLog(client, prefix, keys))).toBe(600);
    } finally {
      client.disconnect();
    }
  });

  it('what a batch had not started at the pause stays in flight, then runs in order as first attempts', async () => {
    const runs: { n: number; attempt: number }[] = [];
    const W = workerClass('pz', { ordered: true, concurrency: 1 }, async (task: Task<{ n: number }>) => {
      runs.push({ n: task.payload.n, attempt: task.attempt });
      await sleep(50);
    });
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('rpause-batch'), route: routeTestOptions('q', 'm1', 2) }, [W]);
    await app.submit.submitOrderedMany('pz', Array.from({ length: 20 }, (_, n) => ({ key: 'a', payload: { n } })));
    await waitFor(() => runs.length >= 3, { message: 'first tasks ran' });
    await app.control.pause('pz');
    await sleep(300);
    const atPause = runs.length;
    expect(atPause).toBeLessThan(20);
    // One batch took all 20: those not started stay in flight for the same owner.
    expect(await app.inspect.getCounts('pz')).toMatchObject({ ready: 0, running: 20 - atPause });
    await sleep(1500);
    expect(runs).toHaveLength(atPause);
    await app.control.resume('pz');
    await waitFor(() => runs.length === 20, { timeoutMs: 10_000, message: 'all 20 ran after resume' });
    expect(runs.map((r) => r.n)).toEqual(Array.from({ length: 20 }, (_, n) => n));
    expect(runs.every((r) => r.attempt === 1)).toBe(true);
    await waitFor(async () => (await app.inspect.getCounts('pz')).running === 0, { message: 'all acked' });
  });
});
