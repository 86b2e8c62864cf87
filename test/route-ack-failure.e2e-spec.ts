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
      const resolved = resolveModuleOptions({ route: routeTestOptions('q', 'a', 1) });
      const options = { ...resolved.route!, batchSize: 5 };
      const store = new RouteStore(client, uniquePrefix(`ackfail-${how}`), options);
      await ensureTopology(store, 1);
      await store.assign(0, 'a', false);
      const { epoch } = await store.renew(0, 'a', true);
      const total = 60;
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
});
