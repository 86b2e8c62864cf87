/**
 * An application that keeps running through a Redis outage recovers by itself (issue 26: "every call settles
 * in a bounded time with a typed error, and it recovers by itself").
 *
 * Failure matrix cells (docs/failure-matrix.md: events, history, cron "Redis down / paused"): an application
 * with delay workers, an every-second `@DistributedCron` schedule and the history writer, on a redis-server of
 * this file's own with an append-only file (what Redis acknowledged survives its restart):
 * | Redis is…                        | checked afterwards                                                          |
 * | killed 4 s, then restarted (AOF) | every task submitted before ran once; new submits run; each tick ran at most once, ticks run again; every task has its history row, done |
 * | paused (SIGSTOP) 4 s, then resumed | the same                                                                   |
 */
import { Injectable } from '@nestjs/common';
import { DistributedCron, TaskHistoryService, type CronRun, type Task } from 'nestjs-distributed-queue';
import { PG_URL, useSchemaNames } from './support/pg';
import { startQueueApp, workerClass, type QueueApp } from './support/queue-app';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';
import { uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

const ticks: number[] = [];
@Injectable()
class EverySecond {
  @DistributedCron('* * * * * *', { name: 'outage-tick' })
  tick(run: CronRun): void {
    ticks.push(run.tickAt);
  }
}

describe('running through a Redis outage', () => {
  let server: RedisServerHandle;
  let app: QueueApp | undefined;
  const newSchema = useSchemaNames();
  beforeAll(async () => {
    server = await startRedisServer({ appendonly: true });
  });
  afterEach(async () => {
    if (server.isRunning()) server.kill('SIGCONT');
    else await server.restart();
    await app?.close();
    app = undefined;
  });
  afterAll(() => server.remove());

  it.each(['killed 4 s, then restarted', 'paused 4 s, then resumed'])('%s: tasks, ticks and history rows resume by themselves, nothing twice', async (how) => {
    if (!server.isRunning()) await server.restart();
    ticks.length = 0;
    const ran: string[] = [];
    app = await startQueueApp(
      {
        connection: server.url, keyPrefix: uniquePrefix('outage-run'), redisTimeoutMs: 1000,
        defaults: { pollIntervalMs: 200, visibilityTimeoutMs: 2000 },
        history: { connection: PG_URL, schema: newSchema(), flushIntervalMs: 50 },
      },
      [workerClass('or.task', { concurrency: 4 }, (task: Task) => void ran.push(task.id)), EverySecond],
    );
    await waitFor(() => ticks.length >= 2, { timeoutMs: 10_000, message: 'the schedule ticks' });
    await app.submit.submitMany('or.task', Array.from({ length: 20 }, (_, i) => ({ id: `before${i}`, payload: i, delay: 2000 })));
    if (how.startsWith('killed')) server.kill('SIGKILL');
    else server.kill('SIGSTOP');
    await sleep(4000);
    if (how.startsWith('killed')) await server.restart();
    else server.kill('SIGCONT');
    const submitted = await waitFor(() => app!.submit.submit('or.task', 'after', { id: 'after' }).then(() => true, () => false), {
      timeoutMs: 15_000, message: 'submits work again',
    });
    expect(submitted).toBe(true);
    const ids = [...Array.from({ length: 20 }, (_, i) => `before${i}`), 'after'];
    await waitFor(() => ids.every((id) => ran.includes(id)), { timeoutMs: 15_000, message: 'every task ran' });
    const ticksBack = ticks.length;
    await waitFor(() => ticks.length >= ticksBack + 2, { timeoutMs: 10_000, message: 'the schedule ticks again' });
    expect(ran.filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());
    expect(new Set(ticks).size).toBe(ticks.length);
    const history = app.app.get(TaskHistoryService);
    await waitFor(async () => {
      await history.flush();
      const rows = await Promise.all(ids.map((id) => history.getHistory('or.task', id)));
      return rows.every((row) => row?.status === 'done');
    }, { timeoutMs: 15_000, message: 'every task has its history row, done' });
  }, 90_000);
});
