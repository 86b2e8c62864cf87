import type { Task } from 'nestjs-distributed-queue';
import { partitionOf } from 'nestjs-distributed-queue/route/route-keys';
import { connect, useQueueApps, workerClass } from './support/queue-app';
import {
  checkLog, overlaps, readLog, readSpans, routeTestOptions, startMachine, submitLoad, useRouteMachines,
} from './support/route';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('route hand-over exclusivity on %s', (_name, target: RedisTarget) => {
  const setup = useRouteMachines(target);
  const { start } = useQueueApps(target);

  it('a slow owner asked to hand over starts nothing more and hands the rest back: no key runs on two machines at once', async () => {
    // Batches of one or two long chains (40-60 ms per task) take seconds, far longer than offlineMs: the
    // owner is revoked mid-batch when m2 and m3 join, and must still be the only one running its keys.
    const env = { DQ_SPANS: '1', DQ_SLOW_MS: '40', DQ_JITTER_MS: '20', DQ_OFFLINE_MS: '1000', DQ_HEARTBEAT_MS: '200' };
    const { prefix, qId, children, submit } = await setup('handover-slow', ['m1'], env);
    const keys = Array.from({ length: 8 }, (_, i) => `s-${i}`);
    const perKey = 90;
    const client = connect(target);
    try {
      // m2 and m3 load first and join only once m1 is in the middle of its chains.
      const joining = ['m2', 'm3'].map((m) => {
        const child = startMachine(target, prefix, qId, m, { ...env, DQ_WAIT_JOIN: '1' });
        children.set(m, child);
        return child;
      });
      await Promise.all(joining.map((c) => c.waitForMessage((m) => m.type === 'loaded', 30_000)));
      await submitLoad(submit, keys, perKey);
      await waitFor(async () => [...(await readLog(client, prefix, keys)).values()].some((e) => e.length >= 5), { timeoutMs: 5000 });
      for (const child of joining) child.send({ type: 'join' });
      await waitFor(async () => [...(await readSpans(client, prefix, keys)).values()].every((list) => list.length >= perKey), {
        timeoutMs: 30_000, intervalMs: 200, message: 'every task ran',
      });
      const result = checkLog(await readLog(client, prefix, keys), perKey);
      const spans = await readSpans(client, prefix, keys);
      const found = overlaps(spans);
      console.log(`[${target.name}] slow hand-over: ${JSON.stringify(result)}; overlaps: ${found.join('; ') || 'none'}`);
      // The hand-over really happened in the middle of chains: some key ran on more than one machine.
      expect([...spans.values()].some((list) => new Set(list.map((s) => s.machine)).size > 1)).toBe(true);
      expect(found).toEqual([]);
      expect(result).toMatchObject({ missing: 0, overtakes: 0, duplicates: 0, staleEpochs: 0 });
      for (const [key, list] of spans) expect([key, list.length]).toEqual([key, perKey]);
    } finally {
      client.disconnect();
    }
  });

  it('a task waiting for its retry when the partition is revoked is handed back, not retried by the old owner', async () => {
    const prefix = uniquePrefix('handover-retry');
    // Two partitions: when b joins, a keeps partition 0 and hands partition 1 over.
    const key = Array.from({ length: 100 }, (_, i) => `r-${i}`).find((k) => partitionOf(k, 2) === 1)!;
    const runs: { machine: string; n: number; attempt: number; at: number }[] = [];
    const worker = (machine: string) =>
      workerClass('ledger', { ordered: true, maxAttempts: 5, backoff: { type: 'fixed', delayMs: 4000, jitter: 0 } }, (task: Task<{ n: number }>) => {
        runs.push({ machine, n: task.payload.n, attempt: task.attempt, at: Date.now() });
        if (machine === 'a') throw new Error('fails on a');
      });
    const a = await start({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions('q', 'a', 2, 1000, 200) }, [worker('a')]);
    await a.submit.submitOrdered('ledger', key, { n: 0 });
    await a.submit.submitOrdered('ledger', key, { n: 1 });
    await waitFor(() => runs.length === 1, { timeoutMs: 5000, message: 'first attempt on a' });
    const failedAt = runs[0].at;
    await start({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions('q', 'b', 2, 1000, 200) }, [worker('b')]);
    await waitFor(() => runs.filter((r) => r.machine === 'b').length === 2, { timeoutMs: 3500, message: 'b ran the handed-back chain' });
    // Past the end of a's backoff: a never retried the task it handed back.
    await sleep(failedAt + 4500 - Date.now());
    expect(runs.map((r) => `${r.machine}${r.n}`)).toEqual(['a0', 'b0', 'b1']);
    expect(runs[1].at - failedAt).toBeLessThan(3500);
    // The hand-back does not count as a failed attempt.
    expect(runs[1].attempt).toBe(1);
  });
});
