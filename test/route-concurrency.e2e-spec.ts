import type { Task } from 'nestjs-distributed-queue';
import { useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('ordered worker concurrency on %s', (_name, target) => {
  const { start } = useQueueApps(target);

  it("bounds an ordered type's handlers at once in one process by its concurrency, over all partitions", async () => {
    const prefix = uniquePrefix('ordered-concurrency');
    let running = 0;
    let most = 0;
    const done = new Map<string, number[]>();
    const W = workerClass('ledger', { ordered: true, concurrency: 4 }, async (task: Task<{ n: number }>) => {
      running++;
      most = Math.max(most, running);
      await sleep(15);
      running--;
      done.set(task.key!, [...(done.get(task.key!) ?? []), task.payload.n]);
    });
    const keys = Array.from({ length: 64 }, (_, i) => `c-${i}`);
    const producer = await start({
      connection: target.connection, keyPrefix: prefix, workers: false, types: { ledger: { ordered: true } },
      route: routeTestOptions('q', 'producer', 16),
    });
    // Everything is queued before the worker starts: every partition has work at once.
    await producer.submit.submitOrderedMany('ledger', keys.flatMap((key) => [0, 1, 2].map((n) => ({ key, payload: { n } }))));
    await start({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions('q', 'solo', 16) }, [W]);
    await waitFor(() => keys.every((k) => done.get(k)?.length === 3), { timeoutMs: 10_000, message: 'every task ran' });
    expect(most).toBe(4);
    for (const k of keys) expect(done.get(k)).toEqual([0, 1, 2]);
  });
});
