import { LeaseLostError, type Task } from 'nestjs-distributed-queue';
import { routeKeys } from 'nestjs-distributed-queue/route/route-keys';
import { untilAborted, useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('an ordered handler whose partition is lost on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);

  it('is aborted with LeaseLostError naming its task (id) and the partition (partition)', async () => {
    const prefix = uniquePrefix('route-lease-lost');
    const running: Task[] = [];
    const reasons: unknown[] = [];
    const W = workerClass('ledger', { ordered: true, maxAttempts: 1 }, async (task: Task, signal) => {
      running.push(task);
      await untilAborted(signal).catch((reason: unknown) => reasons.push(reason));
    });
    const app = await start({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions('q', 'solo', 2) }, [W]);
    const { id, partition } = await app.submit.submitOrdered('ledger', 'k', {});
    await waitFor(() => running.length === 1, { timeoutMs: 10_000, message: 'the task started' });
    // Another machine took the partition over: the owner's next heartbeat finds it is no longer its own.
    await redis().hset(routeKeys(prefix, 'q').partition(partition).own, 'owner', 'other');
    await waitFor(() => reasons.length === 1, { timeoutMs: 10_000, message: 'the handler was aborted' });
    const reason = reasons[0] as LeaseLostError;
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect({ id: reason.id, partition: reason.partition }).toEqual({ id, partition });
    expect(reason.message).toContain(id);
    expect(reason.message).toContain(`partition ${partition}`);
  });
});
