import { createHash } from 'crypto';
import { Injectable } from '@nestjs/common';
import { OnTaskEvent, type RedisConnection, type TaskEvent } from 'nestjs-distributed-queue';
import { loadScripts } from 'nestjs-distributed-queue/redis/script-loader';
import { useQueueApps, workerClass } from './support/queue-app';
import { HOST } from './support/redis-server';
import { ProxyRules, startTcpProxy, type ProxiedCommand, type TcpProxy } from './support/tcp-proxy';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

/*
 * Failure matrix of lifecycle events (docs/failure-matrix.md, section 1): the state change written (W1) but
 * its reply lost. A proxy lets the call that carries a task's ack run in Redis, withholds its reply and
 * drops the connection; ioredis sends the call again, whose ack Redis refuses (already acked). Local events
 * are at most once (README): no local `completed` for that task; the fleet hears the completion the first
 * call wrote, once; the task ran once and is done. Single server and cluster (a proxy per master).
 */

const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

/** Matches a call of the take script (EVALSHA, or its EVAL fallback) that acknowledges `id`. */
function takeAcking(id: string): (c: ProxiedCommand) => boolean {
  const sha = sha1(loadScripts().find((s) => s.command === 'dqDelayTake')!.lua);
  return ({ args }) => {
    const name = args[0]?.toLowerCase();
    if (!((name === 'evalsha' && args[1] === sha) || (name === 'eval' && sha1(args[1] ?? '') === sha))) return false;
    // ARGV[10..]: pairs of id and token to acknowledge.
    const argv = args.slice(3 + Number(args[2]));
    return argv.slice(9).some((value, i) => i % 2 === 0 && value === id);
  };
}

/** Proxies in front of the target: one for a single server, one per master (natMap) for a cluster. */
async function proxyTarget(target: RedisTarget): Promise<{ connection: RedisConnection; rules: ProxyRules; proxies: TcpProxy[] }> {
  const rules = new ProxyRules();
  if (typeof target.connection === 'string') {
    const proxy = await startTcpProxy({ port: Number(new URL(target.connection).port) }, rules);
    return { connection: `redis://${HOST}:${proxy.port}`, rules, proxies: [proxy] };
  }
  const nodes = target.connection.cluster as { host: string; port: number }[];
  const proxies = await Promise.all(nodes.map((node) => startTcpProxy(node, rules)));
  const natMap = Object.fromEntries(nodes.map((n, i) => [`${n.host}:${n.port}`, { host: HOST, port: proxies[i].port }]));
  return { connection: { cluster: proxies.map((p) => ({ host: p.host, port: p.port })), clusterOptions: { natMap } }, rules, proxies };
}

describe.each(getTargets().map((t) => [t.name, t] as const))('an ack whose reply is lost, on %s', (_name, target) => {
  const { start } = useQueueApps(target);
  let proxies: TcpProxy[] = [];
  afterEach(async () => {
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });

  it('the ack ran but its reply was lost: no local completed (at most once), the fleet hears it once, the task ran once', async () => {
    const prefix = uniquePrefix('evm-lost-ack');
    const type = 'fl';
    const proxied = await proxyTarget(target);
    proxies = proxied.proxies;
    const seen: TaskEvent[] = [];
    @Injectable()
    class Both {
      @OnTaskEvent(type, '*')
      local(event: TaskEvent): void {
        seen.push(event);
      }

      @OnTaskEvent(type, '*', { scope: 'fleet' })
      fleet(event: TaskEvent): void {
        seen.push(event);
      }
    }
    const ran: string[] = [];
    const W = workerClass(type, {}, (task) => {
      ran.push(task.id);
    });
    const app = await start({ connection: proxied.connection, keyPrefix: prefix, events: { followIntervalMs: 50 } }, [W, Both]);
    const heard = (id: string) => seen.filter((e) => e.task.id === id).map((e) => `${e.scope}:${e.event}`);
    await app.submit.submit(type, 0, { id: 'before' });
    await waitFor(() => heard('before').length === 2, { timeoutMs: 10_000, message: 'both events of the first task' });

    const rule = proxied.rules.dropReply(takeAcking('lost'));
    await app.submit.submit(type, 1, { id: 'lost' });
    await waitFor(() => rule.fired, { timeoutMs: 10_000, message: 'the reply of the ack dropped' });
    await waitFor(() => heard('lost').includes('fleet:completed'), { timeoutMs: 10_000, message: 'the fleet completion' });
    await app.submit.submit(type, 2, { id: 'after' });
    await waitFor(() => heard('after').length === 2, { timeoutMs: 10_000, message: 'both events of the next task' });
    // NOTE: several follow intervals more, for a late or repeated event to show up if one were coming.
    await sleep(500);
    expect(heard('before').sort()).toEqual(['fleet:completed', 'local:completed']);
    expect(heard('lost')).toEqual(['fleet:completed']);
    expect(heard('after').sort()).toEqual(['fleet:completed', 'local:completed']);
    expect(ran).toEqual(['before', 'lost', 'after']);
    expect(await app.inspect.getState(type, 'lost')).toBe('done');
  });
});
