import { Redis } from 'ioredis';
import type { DistributedQueueModuleOptions } from 'nestjs-distributed-queue';
import { redisCommand, startRedisServer, type RedisServerHandle } from './redis-server';
import type { RedisTarget } from './targets';
import { setAclUser } from './tls';

/** An ACL user for a describe block, on a Redis of its own (single target) or on the test cluster's nodes. */
export interface AclUser {
  readonly user: string;
  /** Sets the user's rule on every node; resolves with the connection option that logs in as the user. */
  apply(rule: string): Promise<NonNullable<DistributedQueueModuleOptions['connection']>>;
  /** The entries of `ACL LOG` (every node) about this user: what it was refused. */
  denied(): Promise<unknown[][]>;
}

/**
 * Registers beforeAll/afterAll hooks: a single target gets a redis-server of its own (users are
 * server-wide), removed after; on the cluster the user is deleted from every node after.
 */
export function useAclUser(target: RedisTarget, label: string): AclUser {
  let own: RedisServerHandle | undefined;
  let ports: number[] = [];
  const user = `${label}-${target.name}-${process.pid}`;
  const password = 'dq-secret';
  beforeAll(async () => {
    if (typeof target.connection === 'string') {
      own = await startRedisServer();
      ports = [own.port];
    } else {
      ports = target.connection.cluster.map((n) => n.port);
    }
  });
  afterAll(async () => {
    if (own) await own.remove();
    else for (const port of ports) await redisCommand(port, ['ACL', 'DELUSER', user]).catch(() => undefined);
  });
  return {
    user,
    async apply(rule) {
      await setAclUser(ports, user, password, rule);
      return own
        ? `redis://${user}:${password}@127.0.0.1:${own.port}`
        : { cluster: ports.map((port) => ({ host: '127.0.0.1', port })), clusterOptions: { redisOptions: { username: user, password } } };
    },
    async denied() {
      const entries: unknown[][] = [];
      for (const port of ports) {
        const client = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
        try {
          entries.push(...((await client.call('ACL', 'LOG')) as unknown[][]).filter((entry) => entry.includes(user)));
        } finally {
          client.disconnect();
        }
      }
      return entries;
    },
  };
}
