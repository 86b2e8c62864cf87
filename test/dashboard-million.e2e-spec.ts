/**
 * The dashboard's listing at a million tasks, over HTTP: the last page of a type's delayed tasks (and the total
 * the API counts with it) while a PING from another connection stays fast.
 *
 * Failure matrix cell (docs/failure-matrix.md, section 2, "Largest: deep pages and counts", NOT TESTED: "a
 * million tasks; the last page over HTTP at that depth"): 1,000,000 delayed tasks of one type (distinct due
 * times), loaded through the library's submit script (DelayQueueStore.submit, 5,000 tasks a call, 4 calls at a
 * time); then `GET /api/types/w/tasks?state=delayed&limit=50&cursor=…` for the page after task 999,949 (the
 * cursor a browser left open there sends every 2 s), while test/support/pinger.ts PINGs the server:
 *  - the page holds the last 50 tasks in due order, `next` null, `total` 1,000,000;
 *  - the slowest PING meanwhile stays under pinger's bound (a listing or count that walked the million in one
 *    script would hold Redis for seconds).
 * Single server (the global one; its keys are unlinked afterwards). Loading the million takes about 20 s on the
 * 2-core test machine (the whole file about 25 s): it runs by default; DQ_MILLION=0 skips it, DQ_TASKS changes
 * the count.
 */
import { randomUUID } from 'crypto';
import { Redis } from 'ioredis';
import { DelayQueueStore, type NewTask } from 'nestjs-distributed-queue/delay/delay-queue.store';
import { signIn, startDashboard, TOKEN } from './support/dashboard';
import { readWithoutBlocking } from './support/pinger';
import { redisNow } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';

const N = Number(process.env.DQ_TASKS ?? 1_000_000);
const PER_CALL = 5000;
const single = getTargets().find((t) => t.name === 'single');
const enabled = process.env.DQ_MILLION !== '0' && single !== undefined;

(enabled ? describe : describe.skip)('the dashboard listing at a million tasks', () => {
  const target = single!;
  const prefix = uniquePrefix('dash-million');
  let client: Redis;
  let close: (() => Promise<void>) | undefined;
  beforeAll(() => {
    client = new Redis(target.connection as string);
  });
  afterAll(async () => {
    await close?.();
    // The million tasks leave the shared server: UNLINK frees them in the background.
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 10_000);
      if (keys.length) await client.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
    client.disconnect();
  }, 120_000);

  it(`reads the last page of ${N} delayed tasks over HTTP, with their total, while a concurrent PING stays fast`, async () => {
    const dash = await startDashboard({ connection: target.connection, keyPrefix: prefix, workers: false, types: { w: {} } }, { token: TOKEN }, []);
    close = () => dash.app.close();
    const store = dash.app.get(DelayQueueStore);
    const base = (await redisNow(client)) + 3_600_000;
    const dueOf = (i: number): number => base + i;

    const loading = performance.now();
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < N) {
        const from = next;
        next = Math.min(N, next + PER_CALL);
        const tasks: NewTask[] = [];
        for (let i = from; i < next; i++) tasks.push({ id: `t${i}`, due: { at: dueOf(i) }, payload: '1' });
        await store.submit('w', tasks, randomUUID());
      }
    };
    await Promise.all([lane(), lane(), lane(), lane()]);
    const loadedMs = Math.round(performance.now() - loading);
    // eslint-disable-next-line no-console
    console.log(`loaded ${N} tasks in ${loadedMs} ms`);

    const { cookie } = await signIn(dash.call);
    const cursor = `delayed.${dueOf(N - 51)}.999999999999999`;
    const read = await readWithoutBlocking(target, async () => {
      const res = await dash.call(`/api/types/w/tasks?state=delayed&limit=50&cursor=${cursor}`, { headers: { cookie } });
      return { status: res.status, body: (await res.json()) as { total: number; next: string | null; tasks: { id: string; dueAt: number; state: string }[] } };
    });
    expect(read.result.status).toBe(200);
    const { total, next: after, tasks } = read.result.body;
    expect({ total, next: after, count: tasks.length }).toEqual({ total: N, next: null, count: 50 });
    expect(tasks.map((t) => t.id)).toEqual(Array.from({ length: 50 }, (_, k) => `t${N - 50 + k}`));
    expect(tasks.every((t) => t.state === 'delayed')).toBe(true);
    expect(['last page over HTTP', read.ok, read.pings, read.bound]).toEqual(['last page over HTTP', true, read.pings, read.bound]);
  }, 240_000);
});
