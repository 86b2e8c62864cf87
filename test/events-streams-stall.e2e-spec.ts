/**
 * A fleet follower whose own `streams` connection is black-holed while task processing goes on.
 *
 * Failure matrix cell (docs/failure-matrix.md, section 1, "Redis black-holed by a proxy"): the follower reads
 * the event streams over a connection of its own (`dq:<prefix>:streams`, opened by EventStreams at the first
 * read); the application reaches Redis through test/support/named-proxy.ts, which silences only the
 * connections that named themselves `…:streams` (holding their bytes, as a network that stops answering
 * does), so the commands and subscriber connections go on:
 * | the streams connection is…            | checked                                                          |
 * | silent 5 s while a task completes every 20 ms | tasks keep running (local completions go on) while the follower hears nothing; once the connection answers again the follower catches up by itself: every event of the stream heard once, in order |
 * Single server of this file's own (a cluster's node connections cannot be told apart behind one proxy).
 */
import { Injectable } from '@nestjs/common';
import { Redis } from 'ioredis';
import { OnTaskEvent, type TaskEvent } from 'nestjs-distributed-queue';
import { eventsOfEntry } from 'nestjs-distributed-queue/events/event-entry';
import type { StreamEntry } from 'nestjs-distributed-queue/events/stream-entry';
import { fleetRecorder } from './support/fleet';
import { startNamedProxy, type NamedProxy } from './support/named-proxy';
import { keysOf, startQueueApp, workerClass, type QueueApp } from './support/queue-app';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe("a fleet follower whose streams connection is black-holed", () => {
  let server: RedisServerHandle;
  let proxy: NamedProxy | undefined;
  let app: QueueApp | undefined;
  let client: Redis | undefined;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterEach(async () => {
    proxy?.stall(undefined);
    client?.disconnect();
    await app?.close();
    app = undefined;
    await proxy?.close();
    proxy = undefined;
  });
  afterAll(() => server.remove());

  it('tasks keep running while the follower is silenced; it catches up by itself, each event once', async () => {
    const prefix = uniquePrefix('ev-stall');
    const type = 'es';
    proxy = await startNamedProxy({ port: server.port });
    const { Recorder, seen } = fleetRecorder(type);
    const doneHere: string[] = [];
    @Injectable()
    class LocalDone {
      @OnTaskEvent(type, 'completed')
      on(event: TaskEvent): void {
        doneHere.push(event.task.id);
      }
    }
    app = await startQueueApp(
      { connection: `redis://127.0.0.1:${proxy.port}`, keyPrefix: prefix, redisTimeoutMs: 1000, events: { followIntervalMs: 50 }, defaults: { pollIntervalMs: 100 } },
      [workerClass(type, { concurrency: 4 }, () => undefined), Recorder, LocalDone],
    );
    const heard = (): string[] => seen.map((e) => `${e.event}:${e.task.id}:${e.task.attempt}`);

    let n = 0;
    let stop = false;
    let refused = 0;
    const flow = (async () => {
      while (!stop && app) {
        await app?.submit.submit(type, n, { id: `s${String(n++).padStart(5, '0')}` }).catch(() => refused++);
        await sleep(20);
      }
    })();
    await waitFor(() => seen.length >= 30, { timeoutMs: 20_000, message: 'the follower hears the flow' });
    const streamsName = `dq:${prefix}:streams`;
    expect(proxy.names()).toContain(streamsName);

    proxy.stall(':streams');
    // NOTE: a read already answered may still be delivered: count from a moment into the silence.
    await sleep(300);
    const heardInSilence = seen.length;
    const doneInSilence = doneHere.length;
    await sleep(5000);
    // Task processing went on (the commands connection flows); the follower heard nothing.
    expect(doneHere.length).toBeGreaterThan(doneInSilence + 50);
    expect(seen.length).toBe(heardInSilence);
    expect(proxy.held).toBeGreaterThan(0);
    proxy.stall(undefined);

    const afterSilence = n;
    await waitFor(() => n >= afterSilence + 20, { timeoutMs: 10_000 });
    stop = true;
    await flow;
    expect(refused).toBe(0);
    const last = `s${String(n - 1).padStart(5, '0')}`;
    await waitFor(() => heard().includes(`completed:${last}:1`), { timeoutMs: 20_000, message: 'the follower caught up' });
    await sleep(500);

    client = new Redis(server.url);
    const entries = (await client.xrange(keysOf(prefix, type).log, '-', '+')) as StreamEntry[];
    const stream = entries.flatMap((entry) => eventsOfEntry(entry, type)).map((e) => `${e.event}:${e.task.id}:${e.task.attempt}`);
    const list = heard();
    expect(list.length - new Set(list).size).toBe(0);
    expect(list).toEqual(stream);
    // Every task ran once and was heard completed once.
    expect(new Set(doneHere).size).toBe(doneHere.length);
    expect(list.filter((s) => s.startsWith('completed:')).length).toBe(doneHere.length);
  }, 60_000);
});
