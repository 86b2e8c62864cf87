import 'reflect-metadata';
import { ServiceScheduler, TaskInspectorService, TaskSubmitService, type Task } from 'nestjs-distributed-queue';
import { workerClass } from './support/queue-app';
import { useAclUser } from './support/acl-user';
import { getFreePort } from './support/redis-server';
import { startHttpQueueApp } from './support/service-mode';
import { getTargets, uniquePrefix } from './support/targets';
import { libraryAclRule } from './support/tls';
import { waitFor } from './support/wait';

const secret = 'acl-service-secret-0123456789';

describe.each(getTargets().map((t) => [t.name, t] as const))('service mode under the least-privilege ACL user on %s', (_name, target) => {
  const acl = useAclUser(target, 'dq-svc');

  it('registers, delivers, counts and stops delivering once the instance leaves, with no NOPERM', async () => {
    const keyPrefix = uniquePrefix('acl-svc');
    const connection = await acl.apply(libraryAclRule(keyPrefix));
    const ran: string[] = [];
    const [schedulerPort, clientPort] = [await getFreePort(), await getFreePort()];
    const scheduler = await startHttpQueueApp({ connection, keyPrefix, mode: 'scheduler', scheduler: { secret, syncIntervalMs: 100 } }, [], schedulerPort);
    const client = await startHttpQueueApp(
      { connection, keyPrefix, mode: 'service', service: { appName: 'acl-app', secret, publicUrl: `http://127.0.0.1:${clientPort}`, heartbeatMs: 200 } },
      [workerClass('acl.svc', {}, (task: Task) => void ran.push(task.id))],
      clientPort,
    );
    try {
      await client.get(TaskSubmitService).submit('acl.svc', {}, { id: 'a1' });
      await waitFor(() => ran.includes('a1'), { timeoutMs: 5000, message: 'delivered under the ACL user' });
      // The scheduler knows the registered type from then on (its metrics, listings and counts cover it).
      expect(scheduler.get(TaskInspectorService).listTypes()).toEqual([{ type: 'acl.svc', ordered: false }]);
      await waitFor(async () => (await scheduler.get(TaskInspectorService).getCounts('acl.svc')).running === 0, { timeoutMs: 3000 });
    } finally {
      await client.close();
      // The scheduler stops the type's consumer (and unsubscribes its wake-ups) once no instance is left.
      await waitFor(() => scheduler.get(ServiceScheduler).runningTypes().size === 0, { timeoutMs: 5000, message: 'consumer stopped' });
      await scheduler.close();
    }
    expect(await acl.denied()).toEqual([]);
  });
});
