import 'reflect-metadata';
import { TaskScheduleService, type Task } from 'nestjs-distributed-queue';
import { workerClass } from './support/queue-app';
import { getFreePort } from './support/redis-server';
import { startHttpQueueApp } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const secret = 'cron-service-secret-0123456789';

describe.each(getTargets().map((t) => [t.name, t] as const))('schedules of a service-mode application on %s', (_name, target) => {
  it("tick in the scheduler (schedules: true) and are delivered to the application's instance", async () => {
    const keyPrefix = uniquePrefix('svc-cron');
    const [schedulerPort, clientPort] = [await getFreePort(), await getFreePort()];
    const ran: string[] = [];
    const scheduler = await startHttpQueueApp({ connection: target.connection, keyPrefix, mode: 'scheduler', schedules: true, scheduler: { secret, syncIntervalMs: 100 } }, [], schedulerPort);
    const client = await startHttpQueueApp(
      { connection: target.connection, keyPrefix, mode: 'service', service: { appName: 'pinger', secret, publicUrl: `http://127.0.0.1:${clientPort}`, heartbeatMs: 200 } },
      [workerClass('ping', {}, (task: Task) => void ran.push(task.id))],
      clientPort,
    );
    try {
      await client.get(TaskScheduleService).upsert('pings', { everyMs: 1000, type: 'ping' });
      await waitFor(() => ran.length >= 2, { timeoutMs: 6000, message: 'two ticks delivered' });
      expect(ran.slice(0, 2).every((id) => /^pings@\d+000$/.test(id))).toBe(true);
      expect(new Set(ran).size).toBe(ran.length);
    } finally {
      await client.close();
      await scheduler.close();
    }
  });
});
