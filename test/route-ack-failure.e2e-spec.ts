import { Logger } from '@nestjs/common';
import type { Task } from 'nestjs-distributed-queue';
import { resolveModuleOptions } from 'nestjs-distributed-queue/options/resolve-options';
import { defineScripts, type RedisClient } from 'nestjs-distributed-queue/redis/script-loader';
import { PartitionRunner } from 'nestjs-distributed-queue/route/partition-runner';
import { ensureTopology } from 'nestjs-distributed-queue/route/route-topology';
import { RouteStore } from 'nestjs-distributed-queue/route/route.store';
import { encodeRouteItem } from 'nestjs-distributed-queue/route/route-producer';
import { Slots } from 'nestjs-distributed-queue/route/slots';
import { SharedTimeouts } from 'nestjs-distributed-queue/runtime/shared-timeouts';
import { withTimeout } from 'nestjs-distributed-queue/runtime/with-timeout';
import { connect } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

/** How an ack call fails: before Redis ran it, or after (its reply lost). */
type AckFailure = 'not sent' | 'reply lost';

/**
 * Makes every `every`-th ack call fail as `how`. The runner sends its last acks of a batch just ahead of the
 * next take, so each failure here comes with a take that Redis ran after the acks did or did not land.
 */
function failAcks(client: RedisClient, how: AckFailure, every: number): () => number {
  const commands = client as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const real = commands.dqRouteAck.bind(client);
  let calls = 0;
  let failed = 0;
  commands.dqRouteAck = async (...args: unknown[]) => {
    if (++calls % every !== 0) return real(...args);
    failed++;
    if (how === 'reply lost') await real(...args);
    throw new Error(`ack call ${calls} failed (${how})`);
  };
  return () => failed;
}

/**
 * A runner of partition 0 (batches of 5, 10 slots) owned by machine `a`, with `total` tasks of 3 keys
 * queued; `runs` lists each run's task number.
 */
async function ownedRunner(client: RedisClient, label: string, total: number) {
  const resolved = resolveModuleOptions({ route: routeTestOptions('q', 'a', 1) });
  const store = new RouteStore(client, uniquePrefix(label), { ...resolved.route!, batchSize: 5 });
  await ensureTopology(store, 1);
  await store.assign(0, 'a', false);
  const { epoch } = await store.renew(0, 'a', true);
  const items = Array.from({ length: total }, (_, n) => encodeRouteItem(`t${n}`, 'ledger', `k${n % 3}`, JSON.stringify({ n })));
  expect(await store.push(0, 1, items)).toEqual(items.map(() => ({ outcome: 'queued' })));
  const runs: number[] = [];
  const handler = { handle: (task: Task<{ n: number }>) => void runs.push(task.payload.n) };
  const runner = new PartitionRunner(0, epoch, {
    store,
    me: 'a',
    workers: new Map([['ledger', { handler, options: { ...resolved.defaults, ordered: true } }]]),
    slots: new Map([['ledger', new Slots(10)]]),
    timeouts: new Map([['ledger', new SharedTimeouts(resolved.defaults.timeoutMs)]]),
    logger: new Logger('test', { timestamp: false }),
    leaseFresh: () => true,
    onEnd: () => undefined,
  });
  return { store, runner, runs };
}

describe.each(getTargets().map((t) => [t.name, t] as const))('route acks that fail on %s', (_name, target) => {
  let client: RedisClient;
  beforeEach(() => {
    // NOTE: without auto-pipelining, which looks the wrapped command up again on the client.
    client = connect(target);
    defineScripts(client);
  });
  afterEach(() => client.disconnect());

  it.each<[AckFailure]>([['not sent'], ['reply lost']])(
    'an ack call that fails (%s) makes the runner ignore the take sent with it: each task runs once, in order',
    async (how) => {
      const failures = failAcks(client, how, 3);
      const total = 60;
      const { store, runner, runs } = await ownedRunner(client, `ackfail-${how}`, total);
      try {
        await waitFor(async () => runs.length >= total && (await store.partitionState(0)).inFlight === 0, {
          timeoutMs: 20_000, intervalMs: 50, message: 'every task ran and was acked',
        });
      } finally {
        await runner.stop(1000);
      }
      expect(failures()).toBeGreaterThan(0);
      expect(runs).toHaveLength(total);
      expect(new Set(runs).size).toBe(total);
      for (let k = 0; k < 3; k++) {
        const ofKey = runs.filter((n) => n % 3 === k);
        expect(ofKey).toEqual([...ofKey].sort((a, b) => a - b));
      }
      expect(await store.partitionState(0)).toMatchObject({ waiting: 0, inFlight: 0, dead: 0 });
    },
  );

  it('a stopping runner whose acks never get through gives up after its grace: stop() ends, the tasks it ran stay in flight for the next owner', async () => {
    const failures = failAcks(client, 'not sent', 1);
    const { store, runner, runs } = await ownedRunner(client, 'ackfail-stop', 12);
    await waitFor(() => runs.length === 5 && failures() > 0, { timeoutMs: 10_000, message: 'the first batch ran, its acks failed' });
    const started = performance.now();
    await withTimeout(runner.stop(100), 15_000, 'runner.stop(100) with acks failing');
    // The grace (100 ms), then up to 1 s of trying to ack.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(runs).toEqual([0, 1, 2, 3, 4]);
    expect(await store.partitionState(0)).toMatchObject({ waiting: 7, inFlight: 5, dead: 0 });
  });
});
