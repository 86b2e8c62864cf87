/**
 * A user's own service-mode applications stop promptly without `forceCloseConnections`: Nest closes the HTTP
 * server after the queue's shutdown, and Node's `server.close()` waits for every kept-alive connection to go
 * idle. Clients that call the library's endpoints without pause (applications submitting through the
 * scheduler's client path; a scheduler delivering to an instance) never let it be idle, so the library's
 * answers close their connection (`Connection: close`) once the application shuts down.
 *
 * | cell                                                          | expected                                   |
 * |---------------------------------------------------------------|--------------------------------------------|
 * | a scheduler (the module's `scheduler` mode in an HTTP app of  | `app.close()` resolves within seconds       |
 * | the user's) while a `service.url` application submits without | (before: never, while the submits went on)  |
 * | pause over its kept-alive connection                          |                                            |
 * | an instance while the scheduler delivers to it without pause  | `app.close()` within `shutdownTimeoutMs` +  |
 * |                                                               | seconds, every task run once               |
 */
import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedQueueModule, TaskSubmitService, type Task } from 'nestjs-distributed-queue';
import { workerClass } from './support/queue-app';
import { getFreePort } from './support/redis-server';
import { SERVICE_SECRET, startHttpQueueApp } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

const target = getTargets()[0];

/** How long `app.close()` took, or null when it had not resolved within `withinMs`. */
async function closeTime(app: INestApplication, withinMs: number): Promise<number | null> {
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), withinMs)));
  const closed = app.close().then(() => performance.now() - t0);
  return Promise.race([closed, late]).finally(() => clearTimeout(timer));
}

describe('service-mode applications without forceCloseConnections stop while clients keep their connections busy', () => {
  const opened: INestApplication[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((app) => app.close().catch(() => undefined)));
  });

  it('a scheduler stops while an application submits through it without pause', async () => {
    const keyPrefix = uniquePrefix('ka-sched');
    const port = await getFreePort();
    const scheduler = await startHttpQueueApp({ connection: target.connection, keyPrefix, mode: 'scheduler', scheduler: { secret: SERVICE_SECRET, syncIntervalMs: 100 }, shutdownTimeoutMs: 500 }, [], port);
    @Module({
      imports: [DistributedQueueModule.forRoot({ mode: 'service', service: { appName: 'shop', secret: SERVICE_SECRET, publicUrl: 'http://127.0.0.1:1', instanceId: 'shop-1', url: `http://127.0.0.1:${port}` } })],
      providers: [workerClass('ka.sub', {}, () => 1)],
    })
    class UrlClientModule {}
    const client = await NestFactory.create(UrlClientModule, { logger: false, abortOnError: false });
    opened.push(client);
    await client.init();
    const submit = client.get(TaskSubmitService);
    let stop = false;
    let submitted = 0;
    // NOTE: eight loops, eight kept-alive connections: at the close one of them has a call in flight, whose
    // connection the loop's next call keeps busy
    const loops = Array.from({ length: 8 }, async () => {
      while (!stop) {
        await submit.submit('ka.sub', { n: submitted }, { delay: 60_000 }).then(() => submitted++, () => sleep(10));
      }
    });
    await waitFor(() => submitted >= 20, { timeoutMs: 10_000, message: 'submits through the scheduler' });
    const took = await closeTime(scheduler, 10_000);
    stop = true;
    await Promise.all(loops);
    if (took === null) opened.push(scheduler);
    expect(took).not.toBeNull();
    expect(took!).toBeLessThan(5000);
  }, 60_000);

  it('an instance stops while the scheduler delivers to it without pause; every task runs once', async () => {
    const keyPrefix = uniquePrefix('ka-inst');
    const [schedulerPort, clientPort] = [await getFreePort(), await getFreePort()];
    const scheduler = await startHttpQueueApp({ connection: target.connection, keyPrefix, mode: 'scheduler', scheduler: { secret: SERVICE_SECRET, syncIntervalMs: 100 } }, [], schedulerPort);
    opened.push(scheduler);
    const ran = new Map<string, number>();
    const service = { appName: 'ka', secret: SERVICE_SECRET, publicUrl: `http://127.0.0.1:${clientPort}`, heartbeatMs: 200 };
    const worker = workerClass('ka.run', { concurrency: 8 }, async (task: Task) => {
      ran.set(task.id, (ran.get(task.id) ?? 0) + 1);
      await sleep(2);
    });
    const instance = await startHttpQueueApp({ connection: target.connection, keyPrefix, mode: 'service', service, shutdownTimeoutMs: 1000 }, [worker], clientPort);
    const n = 20_000;
    const submit = instance.get(TaskSubmitService);
    for (let i = 0; i < n; i += 1000) await submit.submitMany('ka.run', Array.from({ length: 1000 }, (_, j) => ({ id: `t${i + j}`, payload: {} })));
    await waitFor(() => ran.size >= 200, { timeoutMs: 10_000, message: 'deliveries flowing' });
    const took = await closeTime(instance, 15_000);
    if (took === null) opened.push(instance);
    expect(took).not.toBeNull();
    expect(took!).toBeLessThan(1000 + 3000);
    // what the instance did not run waits for the next instance: none ran twice
    expect([...ran.values()].filter((runs) => runs > 1)).toEqual([]);
  }, 60_000);
});
