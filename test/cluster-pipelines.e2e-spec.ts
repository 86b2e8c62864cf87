import { Cluster } from 'ioredis';
import { closeRedisClient, createRedisClient } from 'nestjs-distributed-queue/redis/redis-connection';
import { getTargets, uniquePrefix } from './support/targets';

/*
 * A cluster pipeline whose keys' slots are no longer served by one node (a slot moved between the tick that
 * gathered an auto-pipeline and its sending, during resharding or a failover): ioredis refused the whole
 * pipeline ("All keys in the pipeline should belong to the same slots allocation group"), nothing sent, and
 * every caller of its commands got that error (the route queue's takes, acks and rebalance). The library's
 * cluster client sends such a pipeline's commands one by one instead. Here a pipeline spans two masters by
 * construction: the same condition, every time. (Under a real migration: cluster-failover.)
 */

const quiet = { log: () => undefined, warn: () => undefined };
const target = getTargets().find((t) => t.name === 'cluster');

(target ? describe : describe.skip)('a cluster pipeline across nodes', () => {
  it('runs each command where its slot lives, in order, and answers as one pipeline', async () => {
    const client = createRedisClient(target!.connection as never, 'commands', 'pipelines-test', quiet) as Cluster;
    try {
      await client.connect();
      const prefix = uniquePrefix('pipes');
      // 12 hash tags: their slots lie on more than one master (a plain ioredis client refuses this pipeline).
      const keys = Array.from({ length: 12 }, (_, i) => `${prefix}:{t${i}}:k`);
      const plain = new Cluster((target!.connection as { cluster: { host: string; port: number }[] }).cluster);
      const refused = await plain.pipeline(keys.map((key) => ['get', key])).exec().catch((e: Error) => e.message);
      plain.disconnect();
      expect(refused).toMatch(/same slots allocation group/);
      const results = await client.pipeline(keys.flatMap((key) => [['set', key, 'v'], ['incr', `${key}:n`], ['get', key]])).exec();
      expect(results!.map(([error]) => error)).toEqual(keys.flatMap(() => [null, null, null]));
      expect(results!.map(([, value]) => value)).toEqual(keys.flatMap(() => ['OK', 1, 'v']));
    } finally {
      await closeRedisClient(client);
    }
  });
});
