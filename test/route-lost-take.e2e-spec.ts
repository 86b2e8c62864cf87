/**
 * An ordered type's acks when a failover lost the take that handed their tasks out.
 *
 * Found by redis-durability-acks cell (d) in a loaded full run: 300 tasks announced completed ran again. The
 * window: a take on the master hands tasks out, the master dies before its replica got that take, so on the
 * promoted replica those tasks still wait in their partition. Their handlers end after the failover and
 * their ack, sent to the new master, finds them not in flight. Before the fix the ack answered OK (it
 * removed nothing), its `WAIT` was confirmed by the new replica, the completions were announced, and the
 * next take ran the tasks again.
 *
 * Failure matrix (a Sentinel set of this file's own: 1 master, 1 replica, 3 sentinels; one partition,
 * batches of 2; the replica's link held on the master's proxy from the second take on, so that take and the
 * acks of the first batch are lost with the master):
 * | cell | event | expected |
 * | (a) durability { replicas: 1 } | second batch running; master SIGKILLed, failover; the batch ends | no task starts after its completion was announced; every task ran twice (the take was lost: the window was hit) and is announced completed once |
 * | (b) no durability | the same | the first batch's completions were announced before the kill and run again (documented: durability is what prevents that); the second batch's are not announced before their tasks run again, and are announced once |
 */
import { Injectable } from '@nestjs/common';
import { OnTaskEvent, type ActiveTask, type TaskEvent } from 'nestjs-distributed-queue';
import { startQueueApp, workerClass, type QueueApp } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { useSentinelSet } from './support/sentinel-set';
import { uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('ordered acks after a failover lost their take', () => {
  const suite = useSentinelSet({ lagMs: 0 });

  async function run(label: string, durability?: { replicas: number; timeoutMs: number }): Promise<void> {
    const type = `lost.${label}`;
    const prefix = uniquePrefix(`lost-take-${label}`);
    const starts = new Map<string, number>();
    const announced = new Map<string, number>();
    const again: string[] = [];
    const first = gate();
    const second = gate();

    @Injectable()
    class CompletedListener {
      @OnTaskEvent(type, 'completed')
      on(event: TaskEvent): void {
        announced.set(event.task.id, (announced.get(event.task.id) ?? 0) + 1);
      }
    }
    const Worker = workerClass(type, { concurrency: 4, ordered: true, maxAttempts: 10 }, async (task: ActiveTask<{ n: number }>) => {
      if (announced.has(task.id)) again.push(task.id);
      starts.set(task.id, (starts.get(task.id) ?? 0) + 1);
      await (task.payload.n < 2 ? first.opened : second.opened);
    });
    const app: QueueApp = await startQueueApp({
      connection: suite.set.connection, keyPrefix: prefix, redisTimeoutMs: 10_000, durability,
      // NOTE: leases far longer than the failover: the partition stays this machine's, at the same epoch.
      route: { ...routeTestOptions(prefix, 'm1', 1, 30_000, 500), batchSize: 2 },
    }, [Worker, CompletedListener]);
    suite.apps.push(app);

    await app.submit.submitOrderedMany(type, ['a', 'b', 'c', 'd'].map((key, n) => ({ key, payload: { n } })));
    await waitFor(() => starts.size === 2, { timeoutMs: 10_000, message: 'the first batch started' });
    // The first take is on the replica; nothing after it will be.
    await suite.set.inSync();
    const master = await suite.set.master();
    master.proxy.setDelay(600_000);
    first.open();
    await waitFor(() => starts.size === 4, { timeoutMs: 10_000, message: `the second batch started (${[...starts.keys()]})` });
    await suite.set.failover();
    master.proxy.setDelay(0);
    second.open();

    const ids = [...starts.keys()];
    await waitFor(() => ids.every((id) => announced.has(id)), { timeoutMs: 30_000, message: `every task announced completed (${[...announced.keys()]})` });
    // NOTE: a run again after its announcement would start at the next take: give it that long.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // NOTE: without durability the first batch's acks were announced on the old master's reply: those tasks
    // run again, announced twice (what durable acks prevent).
    const rerun = durability ? [] : ids.slice(0, 2).sort();
    expect({ again: [...again].sort(), announced: Object.fromEntries(announced) }).toEqual({ again: rerun, announced: Object.fromEntries(ids.map((id) => [id, rerun.includes(id) ? 2 : 1])) });
    // Every task ran twice: the failover lost the first batch's acks and the second take (the window was hit).
    expect(Object.fromEntries(starts)).toEqual(Object.fromEntries(ids.map((id) => [id, 2])));
  }

  it('(a) durable acks: no task announced completed runs again', () => run('a', { replicas: 1, timeoutMs: 9000 }), 90_000);

  it('(b) without durability: no task announced completed runs again', () => run('b'), 90_000);
});
