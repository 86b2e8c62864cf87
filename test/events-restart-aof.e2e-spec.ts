/**
 * A fleet follower under a Redis restarted WITH persistence resumes exactly from its position.
 *
 * Failure matrix cell (docs/failure-matrix.md, section 1, "Redis restarted" / "Redis down (then back)"): with
 * AOF (appendonly yes, appendfsync always) the event stream survives the restart whole, so the follower's
 * in-memory position (W4) still points into it:
 * | Redis is…                                     | checked afterwards                                          |
 * | SIGKILLed twice under a running follower, each time restarted on its AOF, while a task completes every 20 ms | the follower heard exactly the events of the stream Redis kept, in the stream's order: none twice, none missed; it heard events before and after each restart |
 * A follower that re-read its stream from the start after the reconnect would hear events twice; one that
 * started again from the end of the stream would miss those written while it was reconnecting.
 * Single server of this file's own (the restart is of one redis-server).
 */
import { Redis } from 'ioredis';
import { eventsOfEntry } from 'nestjs-distributed-queue/events/event-entry';
import type { StreamEntry } from 'nestjs-distributed-queue/events/stream-entry';
import { fleetRecorder } from './support/fleet';
import { keysOf, startQueueApp, workerClass, type QueueApp } from './support/queue-app';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe('a fleet follower through a Redis restart with AOF', () => {
  let server: RedisServerHandle;
  let app: QueueApp | undefined;
  let client: Redis | undefined;
  beforeAll(async () => {
    server = await startRedisServer({ appendonly: true });
  });
  afterEach(async () => {
    if (!server.isRunning()) await server.restart();
    client?.disconnect();
    await app?.close();
    app = undefined;
  });
  afterAll(() => server.remove());

  it('resumes exactly from its position after each restart: every event Redis kept heard once, in order', async () => {
    const prefix = uniquePrefix('ev-aof');
    const type = 'ea';
    const { Recorder, seen } = fleetRecorder(type);
    app = await startQueueApp(
      { connection: server.url, keyPrefix: prefix, redisTimeoutMs: 1000, events: { followIntervalMs: 50 }, defaults: { pollIntervalMs: 100, visibilityTimeoutMs: 2000 } },
      [workerClass(type, { concurrency: 4 }, () => undefined), Recorder],
    );
    const heard = (): string[] => seen.map((e) => `${e.event}:${e.task.id}:${e.task.attempt}`);

    // A task every 20 ms until told to stop; submits refused during the outage are skipped.
    let n = 0;
    let stop = false;
    const flow = (async () => {
      while (!stop && app) {
        const id = `s${String(n++).padStart(5, '0')}`;
        await app?.submit.submit(type, n, { id }).catch(() => undefined);
        await sleep(20);
      }
    })();

    const heardAtRestart: number[] = [];
    for (let round = 0; round < 2; round++) {
      const before = seen.length;
      await waitFor(() => seen.length >= before + 30, { timeoutMs: 20_000, message: `the follower hears the flow (round ${round})` });
      heardAtRestart.push(seen.length);
      server.kill('SIGKILL');
      await waitFor(() => !server.isRunning(), { timeoutMs: 5000 });
      await sleep(1000);
      await server.restart();
    }
    const afterLast = seen.length;
    await waitFor(() => seen.length >= afterLast + 30, { timeoutMs: 20_000, message: 'the follower hears again after the last restart' });
    stop = true;
    await flow;

    // What Redis kept: the whole stream (the follower started on an empty one), read once everything settled.
    client = new Redis(server.url);
    const kept = async (): Promise<string[]> => {
      const entries = (await client!.xrange(keysOf(prefix, type).log, '-', '+')) as StreamEntry[];
      return entries.flatMap((entry) => eventsOfEntry(entry, type)).map((e) => `${e.event}:${e.task.id}:${e.task.attempt}`);
    };
    await waitFor(async () => JSON.stringify(heard()) === JSON.stringify(await kept()), {
      timeoutMs: 20_000, message: 'the follower heard the stream Redis kept',
    }).catch(() => undefined);
    const stream = await kept();
    const list = heard();
    expect(list.length).toBeGreaterThan(afterLast);
    expect(list.length - new Set(list).size).toBe(0);
    expect(list).toEqual(stream);
    // It heard events written before each restart and after it (the stream holds them all, in that order).
    for (const at of heardAtRestart) expect(stream.length).toBeGreaterThan(at);
  }, 60_000);
});
