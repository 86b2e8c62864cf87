import { LuaScript } from 'nestjs-distributed-queue/redis/lua-script';
import { closeRedisClient, createRedisClient } from 'nestjs-distributed-queue/redis/redis-connection';
import { ProxyRules, startTcpProxy, type ProxiedCommand } from './support/tcp-proxy';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

/*
 * A cluster reached through a natMap (every master behind an address of its own, here a TCP proxy): a
 * command that lands on the wrong master follows the MOVED reply to the mapped address of the right one,
 * in one hop. (ioredis keys its connections by the mapped address but recorded the MOVED reply's address
 * as the server sent it, so each hop went to a random master until one happened to be right: after a
 * dropped connection a re-sent script went round MOVED 16 times and failed, "Too many Cluster redirections".)
 */

const quiet = { log: () => undefined, warn: () => undefined };

const INCR = new LuaScript("return redis.call('INCR', KEYS[1])", 1);

const target = getTargets().find((t) => t.name === 'cluster');

(target ? describe : describe.skip)('a cluster behind a natMap', () => {
  it('a script re-sent after its connection was cut reaches its master within one MOVED hop, each time', async () => {
    const nodes = (target!.connection as { cluster: { host: string; port: number }[] }).cluster;
    const rules = new ProxyRules();
    const key = `${uniquePrefix('natmap')}:n`;
    const isCall = ({ args }: ProxiedCommand): boolean => /^eval(sha)?$/i.test(args[0] ?? '') && args[3] === key;
    let sends = 0;
    // An observer first in the list: it sees every request on every proxy and never matches.
    rules.dropReply((command) => {
      if (isCall(command)) sends++;
      return false;
    });
    const proxies = await Promise.all(nodes.map((node) => startTcpProxy(node, rules)));
    const natMap = Object.fromEntries(nodes.map((n, i) => [`${n.host}:${n.port}`, { host: proxies[i].host, port: proxies[i].port }]));
    const connection = { cluster: proxies.map((p) => ({ host: p.host, port: p.port })), clusterOptions: { natMap } };
    const client = createRedisClient(connection, 'commands', 'natmap-test', quiet);
    try {
      expect(await INCR.run(client, [key])).toBe(1);
      const perRound: number[] = [];
      for (let round = 0; round < 20; round++) {
        sends = 0;
        // The call runs, its reply is dropped with the connection: ioredis sends it again (to a random
        // master, as after any lost connection), and the call runs twice.
        const rule = rules.dropReply(isCall);
        expect(await INCR.run(client, [key])).toBe(3 + 2 * round);
        await waitFor(() => rule.fired, { timeoutMs: 5000, message: 'the reply was dropped' });
        perRound.push(sends);
      }
      // The first send, the re-send to a random master, at most one MOVED hop.
      expect(perRound.filter((n) => n > 3)).toEqual([]);
    } finally {
      await closeRedisClient(client);
      await Promise.all(proxies.map((p) => p.close()));
    }
  });
});
