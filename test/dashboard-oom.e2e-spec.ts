/**
 * The dashboard while Redis is out of memory (maxmemory, policy noeviction: every write that needs memory is
 * refused). That is when an operator opens it: to see what fills Redis and to free it.
 *
 * Failure matrix (a redis-server of this file's own, put over its maxmemory by another application's keys):
 * | call at maxmemory                                   | expected                                                     |
 * | sign-in with the token                              | a session (303): its record is allowed past the limit, it is a few bytes with a TTL |
 * | every read: overview, listings of each state, a task, its limits, groups, a group, the route, flows, a flow | 200 with the data |
 * | actions that free or move: cancel a delayed task, delete dead letters, re-drive, sign out | 200, done |
 * | actions that write: pause, run now, a concurrency limit | 507 RedisOutOfMemoryError, nothing written                |
 * | memory freed                                        | the refused actions work                                     |
 */
import { Redis } from 'ioredis';
import { QueueControlService, TaskFlowService, TaskInspectorService } from 'nestjs-distributed-queue';
import { signIn, TOKEN, useDashboards } from './support/dashboard';
import { workerClass } from './support/queue-app';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { routeTestOptions } from './support/route';
import { uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const json = { 'content-type': 'application/json' };

describe('the dashboard at maxmemory', () => {
  const { start } = useDashboards();
  let server: RedisServerHandle;
  beforeAll(async () => {
    server = await startRedisServer({ extraArgs: ['--maxmemory', '200mb', '--maxmemory-policy', 'noeviction'] });
  });
  afterAll(() => server.remove());

  it('signs in, reads everything, frees; refuses the writes with 507 until memory is freed', async () => {
    const prefix = uniquePrefix('dash-oom');
    const fail = (): never => {
      throw new Error('fails');
    };
    const { app, call, submit } = await start({
      connection: server.url, keyPrefix: prefix, route: routeTestOptions(prefix, 'm', 2), defaults: { pollIntervalMs: 100 }, events: { stream: true },
    }, { token: TOKEN }, [
      workerClass('job', { maxAttempts: 1 }, fail),
      workerClass('grouped', {}, () => new Promise(() => undefined)),
      workerClass('ordered', { ordered: true, maxAttempts: 1 }, fail),
    ]);
    for (const id of ['d1', 'd2', 'd3']) await submit.submit('job', {}, { id });
    for (const id of ['later1', 'later2']) await submit.submit('job', {}, { id, delay: 600_000 });
    await submit.submit('grouped', {}, { id: 'g1', group: 'acme', delay: 600_000 });
    await submit.submitOrdered('ordered', 'k', {}, { id: 'o1' });
    const flow = await app.get(TaskFlowService).submitFlow([{ ref: 'a', type: 'job', payload: {}, delay: 600_000 }]);
    await waitFor(async () => (await app.get(TaskFlowService).getFlow(flow.id)) !== null && (await (await call('/api/types/job/tasks?state=dead', {
      headers: { authorization: `Bearer ${TOKEN}` },
    })).json() as { total: number }).total === 3, { timeoutMs: 10_000, message: 'three dead letters' });

    const admin = new Redis(server.port, '127.0.0.1');
    for (let i = 0; i < 5; i++) await admin.set(`junk:${i}`, 'x'.repeat(1024 * 1024));
    const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
    await admin.config('SET', 'maxmemory', String(used - 3 * 1024 * 1024));
    try {
      const { cookie, csrf } = await signIn(call);
      const get = (path: string) => call(path, { headers: { cookie } });
      const post = (path: string, body: unknown = {}) => call(path, { method: 'POST', headers: { cookie, ...json, 'x-csrf-token': csrf }, body: JSON.stringify(body) });
      const reads = [
        '/api/overview', '/api/types/job/tasks?state=dead', '/api/types/job/tasks?state=delayed', '/api/types/job/tasks?state=ready',
        '/api/types/job/tasks?state=running', '/api/types/job/tasks/d1', '/api/types/job/tasks?id=d2', '/api/types/job/limits',
        '/api/types/grouped/groups', '/api/types/grouped/groups/acme', '/api/route', '/api/flows', `/api/flows/${flow.id}`,
        '/api/types/ordered/tasks?state=dead',
      ];
      for (const path of reads) expect([path, (await get(path)).status]).toEqual([path, 200]);
      const overview = (await (await get('/api/overview')).json()) as { types: { type: string; counts: { dead: number } }[] };
      expect(overview.types.find((t) => t.type === 'job')?.counts.dead).toBe(3);

      expect(await (await post('/api/types/job/tasks/later1/cancel')).json()).toEqual({ result: 'cancelled' });
      expect(await (await post('/api/types/job/dead/delete', { ids: ['d1'] })).json()).toEqual({ count: 1 });
      // A re-drive moves a letter (its first write frees it from the dead letters): Redis lets it run whole.
      expect(await (await post('/api/types/job/dead/redrive', { ids: ['d2'] })).json()).toEqual({ count: 1 });
      for (const path of ['/api/types/job/pause', '/api/types/job/tasks/later2/run-now', '/api/types/job/limits/global-concurrency']) {
        const refused = await post(path, { globalConcurrency: 2 });
        expect([path, refused.status, ((await refused.json()) as { error: { name: string } }).error.name]).toEqual([path, 507, 'RedisOutOfMemoryError']);
      }
      // Nothing of them written (the key count would not say it: the re-driven letter runs and dies again meanwhile).
      expect(await app.get(QueueControlService).isPaused('job')).toBe(false);
      expect(await app.get(TaskInspectorService).getState('job', 'later2')).toBe('delayed');
      expect((await app.get(QueueControlService).getLimits('job')).globalConcurrency.configured).toBeNull();
      expect(await app.get(TaskFlowService).getFlow(flow.id)).not.toBeNull();

      for (let i = 0; i < 5; i++) await admin.del(`junk:${i}`);
      expect(await (await post('/api/types/job/pause')).json()).toEqual({ paused: true });
      expect(await (await post('/api/types/job/tasks/later2/run-now')).json()).toEqual({ ok: true });
      expect((await post('/logout')).status).toBe(200);
    } finally {
      for (let i = 0; i < 5; i++) await admin.del(`junk:${i}`);
      admin.disconnect();
    }
  }, 60_000);
});
