import { Injectable } from '@nestjs/common';
import { OnTaskEvent, type TaskEvent } from 'nestjs-distributed-queue';
import { eventsOfEntry } from 'nestjs-distributed-queue/events/event-entry';
import type { StreamEntry } from 'nestjs-distributed-queue/events/stream-entry';
import { killAllChildren, type ChildHandle } from './support/child';
import { keysOf, useQueueApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';
import { fleetApp, fleetRecorder } from './support/fleet';

/*
 * Failure matrix of fleet events (docs/failure-matrix.md, section 1), the cells not about Redis outages:
 *  - replicas: three processes that each run the type and follow its fleet events, and a producer that
 *    follows them too: every follower hears each event of every worker exactly once;
 *  - crash of a follower mid-stream (SIGKILL while events flow), then a new follower process: it hears
 *    exactly the stream from some point on, every event written after it was ready, none from before it
 *    was started;
 *  - a follower more than `events.streamMaxLen` entries behind (SIGSTOPped while 1,000 entries are
 *    written under a cap of 100): it misses only the oldest, hears the rest once, in order, and goes on;
 *  - single server and cluster (both targets).
 * Largest and long values, bad entries and the fleet `dead` of a burying take: events-edges.e2e-spec.ts.
 */

/** `event:id` of every event a child reported, in order. */
const heardBy = (child: ChildHandle): string[] => child.messages.filter((m) => m.type === 'event').map((m) => `${m.event}:${m.id}`);

/** Counts of each string. */
function tally(list: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of list) out.set(s, (out.get(s) ?? 0) + 1);
  return out;
}

describe.each(getTargets().map((t) => [t.name, t] as const))('fleet events matrix on %s', (_name, target) => {
  const { start, redis } = useQueueApps(target);
  afterEach(() => killAllChildren());

  it('three workers that each follow, and a producer that follows: every follower hears each event exactly once', async () => {
    const prefix = uniquePrefix('evm-replicas');
    const type = 'fm';
    const { Recorder, seen } = fleetRecorder(type);
    const producer = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { [type]: {} }, events: { followIntervalMs: 50 } }, [Recorder]);
    const children = [0, 1, 2].map(() => fleetApp(target, prefix, type, { DQ_WORK: '1' }));
    await Promise.all(children.map((c) => c.waitForMessage((m) => m.type === 'ready', 60_000)));
    // NOTE: each task holds 20 ms so that the three workers (4 at a time each) share the load.
    const items = Array.from({ length: 150 }, (_, i) => ({ id: `t${i}`, payload: { fail: i % 10 === 7, holdMs: 20 } }));
    await producer.submit.submitMany(type, items);
    const waiting = Array.from({ length: 5 }, (_, i) => `w${i}`);
    await producer.submit.submitMany(type, waiting.map((id) => ({ id, payload: {}, delay: 600_000 })));
    for (const id of waiting) expect(await producer.submit.cancel(type, id)).toBe('cancelled');

    const expected: string[] = [];
    for (const { id, payload } of items) expected.push(...(payload.fail ? [`failed:${id}`, `retrying:${id}`] : []), `completed:${id}`);
    expected.push(...waiting.map((id) => `cancelled:${id}`));
    const producerHeard = () => seen.map((e) => `${e.event}:${e.task.id}`);
    const everyone = () => [producerHeard(), ...children.map(heardBy)];
    await waitFor(() => everyone().every((list) => list.length >= expected.length), { timeoutMs: 30_000, message: 'every follower heard every event' });
    // NOTE: several follow intervals (50 ms) more, for a duplicate to show up if one were coming.
    await sleep(600);
    for (const list of everyone()) {
      expect([...list].sort()).toEqual([...expected].sort());
      // Per task, the order of its events is the order they happened.
      for (const { id } of items.filter((t) => t.payload.fail)) {
        expect(list.filter((s) => s.endsWith(`:${id}`))).toEqual([`failed:${id}`, `retrying:${id}`, `completed:${id}`]);
      }
    }
    // Each attempt ran once over the workers, and more than one worker ran the type at once.
    const ran = children.flatMap((c) => c.messages.filter((m) => m.type === 'ran').map((m) => m.id as string));
    expect(tally(ran).size).toBe(items.length);
    expect([...tally(ran).values()].every((n) => n === 1)).toBe(true);
    expect(children.filter((c) => c.messages.some((m) => m.type === 'ran')).length).toBeGreaterThanOrEqual(2);
  });

  it('a follower SIGKILLed mid-stream and started again hears exactly the stream from its start on, each event once', async () => {
    const prefix = uniquePrefix('evm-restart');
    const type = 'fk';
    const doneHere: string[] = [];
    @Injectable()
    class LocalDone {
      @OnTaskEvent(type, 'completed')
      on(event: TaskEvent): void {
        doneHere.push(event.task.id);
      }
    }
    const W = workerClass(type, { concurrency: 4 }, () => undefined);
    const app = await start({ connection: target.connection, keyPrefix: prefix, events: { followIntervalMs: 50 } }, [W, LocalDone]);
    const first = fleetApp(target, prefix, type);
    await first.waitForMessage((m) => m.type === 'ready', 60_000);

    // A steady flow of tasks, one every 20 ms, until told to stop.
    let n = 0;
    let stop = false;
    const flow = (async () => {
      while (!stop) {
        await app.submit.submit(type, n, { id: `s${String(n).padStart(5, '0')}` });
        n++;
        await sleep(20);
      }
    })();
    await waitFor(() => heardBy(first).length >= 20, { timeoutMs: 20_000, message: 'the first follower hearing the flow' });
    first.kill('SIGKILL');
    await first.exited;
    await sleep(300);
    const doneBeforeSecond = new Set(doneHere);
    const second = fleetApp(target, prefix, type);
    await second.waitForMessage((m) => m.type === 'ready', 60_000);
    const readyAt = n;
    await waitFor(() => n >= readyAt + 40, { timeoutMs: 20_000, message: 'tasks after the second follower started' });
    stop = true;
    await flow;
    const last = `s${String(n - 1).padStart(5, '0')}`;
    await waitFor(() => heardBy(second).includes(`completed:${last}`), { timeoutMs: 20_000, message: 'the last completion heard' });
    await sleep(400);

    const heard = heardBy(second);
    expect(heard.every((s) => s.startsWith('completed:'))).toBe(true);
    const ids = heard.map((s) => s.slice('completed:'.length));
    expect(tally(ids).size).toBe(ids.length);
    // Nothing finished before the second follower was started; everything submitted once it was ready.
    expect(ids.filter((id) => doneBeforeSecond.has(id))).toEqual([]);
    for (let i = readyAt; i < n; i++) expect(ids).toContain(`s${String(i).padStart(5, '0')}`);
    // What it heard is the stream's completions from one entry on, in the stream's order.
    const entries = (await redis().xrange(keysOf(prefix, type).log, '-', '+')) as StreamEntry[];
    const inStream = entries.flatMap((e) => eventsOfEntry(e, type)).filter((e) => e.event === 'completed').map((e) => e.task.id);
    const from = inStream.indexOf(ids[0]);
    expect(from).toBeGreaterThan(0);
    expect(ids).toEqual(inStream.slice(from));
  });

  it('a follower more than events.streamMaxLen entries behind misses only the oldest, hears the rest once and goes on', async () => {
    const prefix = uniquePrefix('evm-cap');
    const type = 'fc';
    const events = { streamMaxLen: 100, followIntervalMs: 50 };
    const app = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { [type]: {} }, events }, []);
    const follower = fleetApp(target, prefix, type, { DQ_STREAM_MAX_LEN: '100' });
    await follower.waitForMessage((m) => m.type === 'ready', 60_000);
    // Each cancel of a waiting task is one entry of the stream (no `failed`: it ran nowhere).
    const cancelAll = async (ids: string[]) => {
      await app.submit.submitMany(type, ids.map((id) => ({ id, payload: 0, delay: 600_000 })));
      for (const id of ids) expect(await app.submit.cancel(type, id)).toBe('cancelled');
    };
    const pre = ['pre0', 'pre1', 'pre2'];
    await cancelAll(pre);
    await waitFor(() => heardBy(follower).length === pre.length, { timeoutMs: 10_000, message: 'the follower following' });

    follower.kill('SIGSTOP');
    const behind = Array.from({ length: 1000 }, (_, i) => `x${String(i).padStart(4, '0')}`);
    await cancelAll(behind);
    // NOTE: the cap is approximate (`MAXLEN ~`: whole nodes of up to 100 entries), so the stream holds 100 to 200.
    const length = await redis().xlen(keysOf(prefix, type).log);
    expect(length).toBeGreaterThanOrEqual(100);
    expect(length).toBeLessThan(behind.length);
    follower.kill('SIGCONT');
    const post = ['post0', 'post1'];
    await cancelAll(post);
    await waitFor(() => heardBy(follower).includes('cancelled:post1'), { timeoutMs: 20_000, message: 'the follower caught up' });
    await sleep(300);

    const ids = heardBy(follower).map((s) => s.slice('cancelled:'.length));
    expect(ids.slice(0, pre.length)).toEqual(pre);
    expect(ids.slice(-post.length)).toEqual(post);
    const caught = ids.slice(pre.length, -post.length);
    // The newest entries, at least the cap's worth, each once and in order; the oldest missed.
    expect(caught.length).toBeGreaterThanOrEqual(100);
    expect(caught.length).toBeLessThan(behind.length);
    expect(caught).toEqual(behind.slice(behind.length - caught.length));
  });
});
