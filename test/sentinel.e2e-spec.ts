import type { Task } from 'nestjs-distributed-queue';
import { startQueueApp, workerClass } from './support/queue-app';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { startSentinel, type SentinelHandle } from './support/sentinel';
import { uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

describe('delay queue through Redis Sentinel', () => {
  let master: RedisServerHandle;
  let sentinel: SentinelHandle;
  beforeAll(async () => {
    master = await startRedisServer();
    sentinel = await startSentinel(master.port);
  });
  afterAll(async () => {
    await sentinel?.stop();
    await master?.remove();
  });

  it('connects with { sentinels, name } and runs tasks', async () => {
    const ran: string[] = [];
    const W = workerClass('sentinel.task', {}, (task: Task) => {
      ran.push(task.id);
    });
    const app = await startQueueApp(
      { connection: { sentinels: [{ host: '127.0.0.1', port: sentinel.port }], name: 'mymaster' }, keyPrefix: uniquePrefix('sentinel') },
      [W],
    );
    try {
      const id = await app.submit.submit('sentinel.task', { via: 'sentinel' }, { delay: 50 });
      await waitFor(() => ran.includes(id), { timeoutMs: 5000 });
      // acked up to ACK_DELAY_MS after its handler (with the next take)
      await waitFor(async () => (await app.inspect.getState('sentinel.task', id)) === 'done', { timeoutMs: 5000, message: 'task recorded done' });
    } finally {
      await app.close();
    }
  });
});
