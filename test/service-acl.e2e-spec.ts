import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { DistributedQueueModule, ServiceScheduler, TaskSubmitService, type DistributedQueueModuleOptions, type Task } from 'nestjs-distributed-queue';
import { workerClass } from './support/queue-app';
import { getFreePort, redisCommand, startRedisServer, type RedisServerHandle } from './support/redis-server';
import { getTargets, uniquePrefix } from './support/targets';
import { libraryAclRule, setAclUser } from './support/tls';
import { waitFor } from './support/wait';

const secret = 'acl-service-secret-0123456789';

async function httpApp(options: DistributedQueueModuleOptions, providers: ReturnType<typeof workerClass>[], port: number): Promise<INestApplication> {
  @Module({ imports: [DistributedQueueModule.forRoot(options)], providers })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
  await app.listen(port, '127.0.0.1');
  return app;
}

describe.each(getTargets().map((t) => [t.name, t] as const))('service mode under the least-privilege ACL user on %s', (name, target) => {
  let own: RedisServerHandle | undefined;
  const user = `dq-svc-${name}-${process.pid}`;
  const password = 'dq-secret';
  let ports: number[] = [];
  beforeAll(async () => {
    if (typeof target.connection === 'string') {
      own = await startRedisServer();
      ports = [own.port];
    } else {
      ports = target.connection.cluster.map((n) => (n as { port: number }).port);
    }
  });
  afterAll(async () => {
    if (own) await own.remove();
    else for (const port of ports) await redisCommand(port, ['ACL', 'DELUSER', user]).catch(() => undefined);
  });

  it('registers, delivers, and stops delivering once the instance leaves, with no NOPERM', async () => {
    const keyPrefix = uniquePrefix('acl-svc');
    await setAclUser(ports, user, password, libraryAclRule(keyPrefix));
    const connection = own
      ? `redis://${user}:${password}@127.0.0.1:${own.port}`
      : { cluster: ports.map((port) => ({ host: '127.0.0.1', port })), clusterOptions: { redisOptions: { username: user, password } } };
    const ran: string[] = [];
    const [schedulerPort, clientPort] = [await getFreePort(), await getFreePort()];
    const scheduler = await httpApp({ connection, keyPrefix, mode: 'scheduler', scheduler: { secret, syncIntervalMs: 100 } }, [], schedulerPort);
    const client = await httpApp(
      { connection, keyPrefix, mode: 'service', service: { appName: 'acl-app', secret, publicUrl: `http://127.0.0.1:${clientPort}`, heartbeatMs: 200 } },
      [workerClass('acl.svc', {}, (task: Task) => void ran.push(task.id))],
      clientPort,
    );
    try {
      await client.get(TaskSubmitService).submit('acl.svc', {}, { id: 'a1' });
      await waitFor(() => ran.includes('a1'), { timeoutMs: 5000, message: 'delivered under the ACL user' });
    } finally {
      await client.close();
      // The scheduler stops the type's consumer (and unsubscribes its wake-ups) once no instance is left.
      await waitFor(() => scheduler.get(ServiceScheduler).runningTypes().size === 0, { timeoutMs: 5000, message: 'consumer stopped' });
      await scheduler.close();
    }
    const denied: unknown[] = [];
    for (const port of ports) {
      const redis = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
      try {
        const log = (await redis.call('ACL', 'LOG')) as unknown[][];
        denied.push(...log.filter((entry) => entry.includes(user)));
      } finally {
        redis.disconnect();
      }
    }
    expect(denied).toEqual([]);
  });
});
