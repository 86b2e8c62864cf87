/**
 * The dashboard's "re-drive all" of a type's dead letters, which moves them in bounded calls (1,000 a call; an
 * ordered type: per partition) until a call moves less than a batch.
 *
 * Failure matrix:
 * | cell | where | expected |
 * | two admins re-drive all at once, 2,300 letters of an ordered type over 23 keys and two partitions | single, cluster | both answer 200; their counts add up to 2,300; each task runs once, each key in order |
 * | the same for a delay-queue type | single, cluster | both answer 200, counts add up; each task runs once |
 * | Redis paused (SIGSTOP) right after the loop's first call answered, ordered and delay-queue types | a redis-server of this file's own | the request answers within redisTimeoutMs + 2 s with a typed 503; after SIGCONT a second re-drive all moves the rest; each task runs once (ordered: in order) |
 * (A SIGKILL of the process between two calls leaves the same state as the pause: the letters not yet moved
 * stay dead letters, each call being one script; the paused cell's second re-drive is that recovery.)
 */
import { Logger } from '@nestjs/common';
import { TaskInspectorService } from 'nestjs-distributed-queue';
import { TOKEN, useDashboards } from './support/dashboard';
import { workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { waitFor } from './support/wait';

const json = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` };
const KEYS = Array.from({ length: 23 }, (_, i) => `acct-${i}`);

/** An ordered type `o` and a delay type `d` whose handlers fail until `heal()`; what they ran once healed. */
function failingWorkers() {
  let failing = true;
  const ran = { o: [] as { key: string; i: number }[], d: [] as number[] };
  const O = workerClass<{ i: number }>('o', { ordered: true, maxAttempts: 1 }, (task) => {
    if (failing) throw new Error('not yet');
    ran.o.push({ key: task.key!, i: task.payload.i });
  });
  const D = workerClass<{ i: number }>('d', { maxAttempts: 1, concurrency: 50 }, (task) => {
    if (failing) throw new Error('not yet');
    ran.d.push(task.payload.i);
  });
  return { workers: [O, D], ran, heal: () => void (failing = false) };
}

/** Each key's payloads in submission order, and the order they ran in. */
function expectInOrder(ran: { key: string; i: number }[], n: number): void {
  expect(ran.map((r) => r.i).sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
  for (const key of KEYS) {
    const of = ran.filter((r) => r.key === key).map((r) => r.i);
    expect([key, of]).toEqual([key, [...of].sort((a, b) => a - b)]);
  }
}

async function deadCounts(inspect: TaskInspectorService): Promise<{ o: number; d: number }> {
  const route = await inspect.getRouteStatus();
  return { o: route.partitions.reduce((a, p) => a + p.dead, 0), d: (await inspect.getCounts('d')).dead };
}

describe('dashboard re-drive all', () => {
  const dashboards = useDashboards();
  beforeEach(() => jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  /** An app with the dashboard, `n` dead letters of each type; returns its parts. */
  async function withDeadLetters(connection: RedisTarget['connection'], n: number, extra: object = {}) {
    const keyPrefix = uniquePrefix('dash-redrive-m');
    const parts = failingWorkers();
    const started = await dashboards.start({ connection, keyPrefix, route: routeTestOptions(keyPrefix, 'm1', 2), ...extra }, { token: TOKEN }, parts.workers);
    const inspect = started.app.get(TaskInspectorService);
    await started.submit.submitOrderedMany('o', Array.from({ length: n }, (_, i) => ({ key: KEYS[i % KEYS.length], payload: { i } })));
    await started.submit.submitMany('d', Array.from({ length: n }, (_, i) => ({ payload: { i } })));
    await waitFor(async () => {
      const dead = await deadCounts(inspect);
      return dead.o === n && dead.d === n;
    }, { timeoutMs: 60_000, message: `${n} dead letters of each type` });
    parts.heal();
    const redriveAll = (type: string) => started.call(`/api/types/${type}/dead/redrive`, { method: 'POST', headers: json, body: JSON.stringify({ all: true }) });
    return { ...started, ...parts, inspect, redriveAll };
  }

  describe.each(getTargets().map((t) => [t.name, t] as const))('on %s', (_name, target) => {
    it('two admins at once: both answer, their counts add up, each task runs once (ordered: each key in order)', async () => {
      const n = 2300;
      const { ran, inspect, redriveAll } = await withDeadLetters(target.connection, n);
      for (const type of ['o', 'd'] as const) {
        const answers = await Promise.all([redriveAll(type), redriveAll(type)]);
        const bodies = await Promise.all(answers.map((a) => a.json() as Promise<{ count: number }>));
        expect([type, answers.map((a) => a.status)]).toEqual([type, [200, 200]]);
        expect([type, bodies[0].count + bodies[1].count]).toEqual([type, n]);
      }
      await waitFor(() => ran.o.length >= n && ran.d.length >= n, { timeoutMs: 60_000, message: 'every letter ran' });
      expectInOrder(ran.o, n);
      expect([...ran.d].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
      expect(await deadCounts(inspect)).toEqual({ o: 0, d: 0 });
    }, 120_000);
  });

  describe('Redis paused mid-loop (a redis-server of its own)', () => {
    let server: RedisServerHandle;
    beforeAll(async () => {
      server = await startRedisServer({ extraArgs: ['--save', ''] });
    });
    afterEach(() => server.kill('SIGCONT'));
    afterAll(() => server.remove());

    it('right after the first call: a typed 503 in bounded time; a second re-drive all moves the rest, each task runs once', async () => {
      const n = 2300;
      const { ran, inspect, redriveAll } = await withDeadLetters(server.url, n, { redisTimeoutMs: 1000 });
      for (const [type, method] of [['o', 'redriveOrderedDead'], ['d', 'redriveDead']] as const) {
        const original = inspect[method].bind(inspect) as (...args: unknown[]) => Promise<number>;
        let calls = 0;
        let first = 0;
        const spy = jest.spyOn(inspect, method).mockImplementation(async (...args: unknown[]) => {
          const moved = await original(...args);
          if (++calls === 1) {
            first = moved;
            server.kill('SIGSTOP');
          }
          return moved;
        });
        const began = Date.now();
        const answer = await redriveAll(type);
        const took = Date.now() - began;
        const body = (await answer.json()) as { error?: { name?: string } };
        expect([type, answer.status, body.error?.name]).toEqual([type, 503, 'RedisUnavailableError']);
        expect(took).toBeLessThan(1000 + 2500);
        spy.mockRestore();
        server.kill('SIGCONT');
        const again = await waitFor(async () => {
          const res = await redriveAll(type);
          return res.status === 200 ? ((await res.json()) as { count: number }) : undefined;
        }, { timeoutMs: 15_000, message: 'the second re-drive all answers' });
        expect([type, first > 0, again.count]).toEqual([type, true, n - first]);
      }
      await waitFor(() => ran.o.length >= n && ran.d.length >= n, { timeoutMs: 60_000, message: 'every letter ran' });
      expectInOrder(ran.o, n);
      expect([...ran.d].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
      expect(await deadCounts(inspect)).toEqual({ o: 0, d: 0 });
    }, 120_000);
  });
});
