/**
 * Redis comes back without the library's records (issue 27, item 4): running applications re-create the
 * route queue's records and the cron schedules by themselves, log once what was lost, and submits work again.
 *
 * Failure matrix (a redis-server of this file's own, without persistence; in-process applications: a route
 * machine with ordered workers and a cron method, and a producer-only application):
 * | Redis…                                   | what is checked                                                 |
 * | restarted empty (SIGKILL, no persistence), under a submit load | ordered submits of both applications work again within a few heartbeats (no "not initialised" error for the rest of the process's life); what is submitted after runs, in order per key; the loss is logged once per repair; the cron method runs again |
 * | flushed (FLUSHALL) while connected, under load | as restarted: nothing reconnects, the repair comes from the machines' rebalance and the producers' submits |
 * | flushed, producer-only application alone (no machine running) | its submits re-create the queue's records at once |
 * | a schedule removed on purpose (not lost)  | it is not declared again (its version counter is kept)              |
 * | a cluster, every master flushed          | as flushed, on a 3-master cluster                                   |
 */
import { Logger } from '@nestjs/common';
import { Cluster, Redis } from 'ioredis';
import { TaskScheduleService, type CronRun, type DistributedQueueModuleOptions, type Task } from 'nestjs-distributed-queue';
import { recordingCron } from './support/cron';
import { startQueueApp, workerClass, type QueueApp } from './support/queue-app';
import { HOST, startRedisCluster, startRedisServer, type RedisClusterHandle, type RedisServerHandle } from './support/redis-server';
import { routeTestOptions } from './support/route';
import { uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

const KEYS = ['a', 'b', 'c', 'd'];

interface Fleet {
  machine: QueueApp;
  producer: QueueApp;
  /** Per key, the sequence numbers in the order they ran. */
  ran: Map<string, number[]>;
  cronRuns: CronRun[];
  warnings: string[];
}

describe('Redis back without the library\'s records: the applications repair them', () => {
  const apps: QueueApp[] = [];
  let warn: jest.SpyInstance;
  let warnings: string[];
  beforeEach(() => {
    warnings = [];
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(function (this: Logger, message: unknown) {
      warnings.push(String(message));
    });
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
    warn.mockRestore();
  });

  async function startFleet(connection: DistributedQueueModuleOptions['connection'], machine = true): Promise<Fleet> {
    const keyPrefix = uniquePrefix('lost');
    const ran = new Map<string, number[]>();
    const cron = recordingCron(`${keyPrefix}-sweep`);
    const common = { connection, keyPrefix, shutdownTimeoutMs: 500 };
    const producer = await startQueueApp({ ...common, route: routeTestOptions(keyPrefix, 'producer', 4), workers: false, types: { 'lost.o': { ordered: true } } });
    apps.push(producer);
    const machineApp = machine
      ? await startQueueApp({ ...common, route: routeTestOptions(keyPrefix, 'm1', 4) }, [
        workerClass('lost.o', { ordered: true }, (t: Task<{ n: number }>) => void ran.set(t.key!, [...(ran.get(t.key!) ?? []), t.payload.n])),
        cron.Sweeper,
      ])
      : producer;
    if (machine) apps.push(machineApp);
    return { machine: machineApp, producer, ran, cronRuns: cron.runs, warnings };
  }

  /** Submits ordered tasks n = from.. on every key from both applications, until `stop()`; rejected ones are counted. */
  function load(fleet: Fleet, from: number) {
    let n = from;
    let stopped = false;
    const accepted = new Map<string, number[]>();
    const errors: string[] = [];
    const done = (async () => {
      while (!stopped) {
        const i = n++;
        const app = i % 2 === 0 ? fleet.producer : fleet.machine;
        await Promise.all(KEYS.map(async (key) => {
          try {
            await app.submit.submitOrdered('lost.o', key, { n: i });
            accepted.set(key, [...(accepted.get(key) ?? []), i]);
          } catch (error) {
            errors.push((error as Error).message);
          }
        }));
        await sleep(20);
      }
    })();
    return { accepted, errors, stop: async () => ((stopped = true), await done) };
  }

  /** After the loss: submits work again, what is accepted from then on runs in order, the cron method runs again. */
  async function expectRepaired(fleet: Fleet, lose: () => Promise<void>): Promise<void> {
    const before = load(fleet, 0);
    await waitFor(() => fleet.ran.size === KEYS.length, { timeoutMs: 10_000, message: 'ordered tasks ran before the loss' });
    await lose();
    const cronRunsAtLoss = fleet.cronRuns.length;
    // Within a few heartbeats (500 ms) and rebalances: submits are accepted again.
    await waitFor(() => fleet.producer.submit.submitOrdered('lost.o', 'probe', { n: -1 }).then(() => true, () => false), { timeoutMs: 10_000, intervalMs: 100, message: 'ordered submits accepted again' });
    await before.stop();
    const after = load(fleet, 1_000_000);
    await sleep(1500);
    await after.stop();
    expect(after.errors).toEqual([]);
    // What was accepted after the repair ran, each key in order (the tasks held before the loss are lost).
    await waitFor(() => KEYS.every((key) => (fleet.ran.get(key) ?? []).filter((n) => n >= 1_000_000).length === after.accepted.get(key)?.length), {
      timeoutMs: 15_000, message: 'every task submitted after the repair ran',
    });
    for (const key of KEYS) expect(fleet.ran.get(key)!.filter((n) => n >= 1_000_000)).toEqual(after.accepted.get(key));
    await waitFor(() => fleet.cronRuns.length > cronRunsAtLoss, { timeoutMs: 15_000, message: 'the cron method runs again' });
    expect(fleet.warnings.some((w) => /Route queue ".*": its records were gone from Redis/.test(w))).toBe(true);
    expect(fleet.warnings.filter((w) => /Distributed cron: .* were gone from Redis/.test(w))).toHaveLength(1);
  }

  describe('on a single server', () => {
    let server: RedisServerHandle;
    beforeAll(async () => {
      server = await startRedisServer({ extraArgs: ['--save', '', '--appendonly', 'no'] });
    });
    afterAll(() => server.remove());

    it('restarted empty under load: every part repairs itself; submits and cron work again', async () => {
      const fleet = await startFleet(server.url);
      await expectRepaired(fleet, async () => {
        server.kill('SIGKILL');
        await server.restart();
      });
    }, 90_000);

    it('flushed while connected, under load: every part repairs itself', async () => {
      const fleet = await startFleet(server.url);
      await expectRepaired(fleet, async () => {
        const admin = new Redis(server.url);
        await admin.flushall();
        admin.disconnect();
      });
    }, 90_000);

    it('flushed with no machine running: a producer\'s submit re-creates the queue at once', async () => {
      const fleet = await startFleet(server.url, false);
      await fleet.producer.submit.submitOrdered('lost.o', 'a', { n: 1 });
      const admin = new Redis(server.url);
      await admin.flushall();
      admin.disconnect();
      const result = await fleet.producer.submit.submitOrdered('lost.o', 'a', { n: 2 });
      expect(result.outcome).toBe('queued');
      expect(warnings.filter((w) => /its records were gone from Redis/.test(w))).toHaveLength(1);
    }, 30_000);

    it('a schedule removed on purpose is not declared again', async () => {
      const fleet = await startFleet(server.url);
      await waitFor(() => fleet.cronRuns.length > 0, { timeoutMs: 5000, message: 'the cron method ran' });
      const schedules = fleet.machine.app.get(TaskScheduleService);
      const name = (await schedules.list()).find((s) => s.name.endsWith('-sweep'))!.name;
      expect(await schedules.remove(name)).toBe(true);
      await sleep(6000); // more than a repair period (5 s)
      expect(await schedules.get(name)).toBeNull();
      expect(warnings.filter((w) => /Distributed cron/.test(w))).toEqual([]);
    }, 30_000);
  });

  describe('on a cluster', () => {
    let cluster: RedisClusterHandle;
    beforeAll(async () => {
      cluster = await startRedisCluster({ masters: 3 });
    });
    afterAll(() => cluster.stop());

    it('every master flushed under load: every part repairs itself', async () => {
      const fleet = await startFleet({ cluster: cluster.nodes });
      await expectRepaired(fleet, async () => {
        const admin = new Cluster(cluster.nodes);
        await admin.ping(); // connected: its masters are known
        const masters = admin.nodes('master');
        expect(masters).toHaveLength(3);
        await Promise.all(masters.map((node) => node.flushall()));
        admin.disconnect();
      });
    }, 90_000);
  });
});
