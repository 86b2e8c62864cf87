import type { RouteStatus } from 'nestjs-distributed-queue';
import { balanced, checkLog, readLog, submitLoad, useRouteMachines } from './support/route';
import { getTargets, type RedisTarget } from './support/targets';
import { connect } from './support/queue-app';
import { waitFor } from './support/wait';

const ownersOf = (status: RouteStatus) => status.partitions.map((p) => p.owner);

describe.each(getTargets().map((t) => [t.name, t] as const))('route queue on %s', (_name, target: RedisTarget) => {
  const redis = () => connect(target);
  const setup = useRouteMachines(target);

  it('keeps per-key order across 3 machines with thousands of keys, all in parallel; nothing lost', async () => {
    const { prefix, submit } = await setup('order', ['m1', 'm2', 'm3']);
    const keys = Array.from({ length: 1000 }, (_, i) => `acct-${i}`);
    const perKey = 12;
    const started = Date.now();
    await submitLoad(submit, keys, perKey);
    const client = redis();
    try {
      await waitFor(async () => (await checkLog(await readLog(client, prefix, keys), perKey)).missing === 0, {
        timeoutMs: 60_000, intervalMs: 250, message: 'every task ran',
      });
      const result = checkLog(await readLog(client, prefix, keys), perKey);
      console.log(`[${target.name}] ${keys.length * perKey} ordered tasks on 3 machines in ${Date.now() - started} ms: ${JSON.stringify(result)}`);
      expect(result).toMatchObject({ missing: 0, overtakes: 0, duplicates: 0, staleEpochs: 0 });
      for (const m of ['m1', 'm2', 'm3']) expect(result.byMachine[m]).toBeGreaterThan(1000);
    } finally {
      client.disconnect();
    }
  });

  it('fails over a SIGKILLed owner within offline + scheduler period; its in-flight tasks run again first; order holds', async () => {
    const { prefix, children, submit, inspect } = await setup('failover', ['m1', 'm2', 'm3'], { DQ_SLOW_MS: '4' });
    const keys = Array.from({ length: 200 }, (_, i) => `k-${i}`);
    const perKey = 40;
    const load = submitLoad(submit, keys, perKey, 0, 100);
    const client = redis();
    try {
      await waitFor(async () => (await readLog(client, prefix, keys)).get(keys[0])!.length >= 5, { timeoutMs: 10_000, intervalMs: 50 });
      const victimPartitions = (await inspect.getRouteStatus()).partitions.filter((p) => p.owner === 'm2').map((p) => p.partition);
      expect(victimPartitions.length).toBeGreaterThan(0);
      children.get('m2')!.kill('SIGKILL');
      const killedAt = Date.now();
      await children.get('m2')!.exited;
      const status = await waitFor(
        async () => {
          const s = await inspect.getRouteStatus();
          return victimPartitions.every((p) => s.partitions[p].owner && s.partitions[p].owner !== 'm2') ? s : null;
        },
        { timeoutMs: 10_000, intervalMs: 50, message: 'partitions of the killed machine moved' },
      );
      const movedAfter = Date.now() - killedAt;
      // Processing again: a task starts on a victim partition after the kill.
      await waitFor(async () => {
        const log = await readLog(client, prefix, keys);
        return [...log.values()].some((entries) => entries.some((e) => victimPartitions.includes(e.partition) && e.machine !== 'm2' && e.at > killedAt));
      }, { timeoutMs: 10_000, intervalMs: 20 });
      const processingAfter = Date.now() - killedAt;
      console.log(`[${target.name}] failover: partitions ${victimPartitions} moved after ${movedAfter} ms, processing again after ${processingAfter} ms (offline 2000 + period 500)`);
      expect(processingAfter).toBeLessThan(5000);
      expect(ownersOf(status).every((o) => o === 'm1' || o === 'm3')).toBe(true);
      await load;
      await waitFor(async () => checkLog(await readLog(client, prefix, keys), perKey).missing === 0, { timeoutMs: 60_000, intervalMs: 250 });
      const result = checkLog(await readLog(client, prefix, keys), perKey);
      console.log(`[${target.name}] failover log: ${JSON.stringify(result)}`);
      expect(result).toMatchObject({ missing: 0, overtakes: 0, staleEpochs: 0 });
    } finally {
      client.disconnect();
    }
  });

  it('hands partitions over cooperatively while machines join and leave under load; order holds', async () => {
    // NOTE: m2 and m3 load meanwhile and join once the load runs: on a loaded 2-core machine a child process
    // takes 10-25 s to load (ts-node, Nest), measured; started with the load, they joined after it was over,
    // and after the 15 s the rebalance is given (a flaky failure). Joined, they hold their partitions within
    // about a second.
    const { prefix, children, joining, submit, inspect } = await setup('handover', ['m1'], { DQ_SLOW_MS: '2' }, ['m2', 'm3']);
    const keys = Array.from({ length: 300 }, (_, i) => `h-${i}`);
    const perKey = 16;
    const client = redis();
    try {
      await Promise.all(joining.map((c) => c.waitForMessage((m) => m.type === 'loaded', 45_000)));
      const load = submitLoad(submit, keys, perKey, 0, 150);
      for (const child of joining) child.send({ type: 'join' });
      const joined = Date.now();
      await waitFor(async () => balanced(await inspect.getRouteStatus(), ['m1', 'm2', 'm3']), { timeoutMs: 15_000, message: 'rebalanced to 3' });
      console.log(`[${target.name}] hand-over: rebalanced to 3 machines ${Date.now() - joined} ms after they joined`);
      await load;
      children.get('m1')!.kill('SIGTERM');
      await children.get('m1')!.exited;
      await waitFor(async () => balanced(await inspect.getRouteStatus(), ['m2', 'm3']), { timeoutMs: 10_000, message: 'rebalanced to 2' });
      await submitLoad(submit, keys, 4, perKey);
      await waitFor(async () => checkLog(await readLog(client, prefix, keys), perKey + 4).missing === 0, { timeoutMs: 60_000, intervalMs: 250 });
      const result = checkLog(await readLog(client, prefix, keys), perKey + 4);
      console.log(`[${target.name}] hand-over log: ${JSON.stringify(result)}`);
      expect(result).toMatchObject({ missing: 0, overtakes: 0, staleEpochs: 0 });
      expect(Object.keys(result.byMachine).sort()).toEqual(['m1', 'm2', 'm3']);
    } finally {
      client.disconnect();
    }
  });
});
