import type { ResolvedRouteOptions } from 'nestjs-distributed-queue/options/resolve-options';
import { resolveModuleOptions } from 'nestjs-distributed-queue/options/resolve-options';
import { defineScripts, type RedisClient } from 'nestjs-distributed-queue/redis/script-loader';
import { ensureTopology } from 'nestjs-distributed-queue/route/route-topology';
import { decodeRouteItem, RouteStore } from 'nestjs-distributed-queue/route/route.store';
import { connect } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';

/**
 * Makes every route script run twice with the same arguments, as when ioredis re-sends a command whose
 * reply was lost in a reconnect: the caller gets the second reply.
 */
function sendTwice(client: RedisClient): void {
  const commands = client as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of Object.keys(commands).filter((n) => /^dqRoute[A-Za-z]+$/.test(n))) {
    const once = commands[name].bind(client);
    commands[name] = async (...args: unknown[]) => {
      await once(...args);
      return once(...args);
    };
  }
}

const item = (id: string) => `{"id":"${id}","type":"ledger","key":"k","payload":{}}`;

describe.each(getTargets().map((t) => [t.name, t] as const))('route scripts re-sent on %s', (_name, target) => {
  let client: RedisClient;
  beforeAll(() => {
    // NOTE: without auto-pipelining, which looks the wrapped commands up again on the client.
    client = connect(target);
    defineScripts(client);
    sendTwice(client);
  });
  afterAll(() => client.disconnect());

  /** A queue of one partition whose every script call runs twice; `a` owns it under `epoch`. */
  async function owned(label: string, extra: Partial<ResolvedRouteOptions> = {}) {
    const options = { ...resolveModuleOptions({ route: routeTestOptions('q', 'a', 1) }).route!, batchSize: 2, ...extra };
    const store = new RouteStore(client, uniquePrefix(label), options);
    await ensureTopology(store, 1);
    await store.assign(0, 'a', false);
    const { epoch } = await store.renew(0, 'a', true);
    return { store, epoch };
  }

  it('push appends once and repeats its reply', async () => {
    const { store } = await owned('resend-push', { maxPartitionSize: 3, rejectStrategy: 'DiscardOldest' });
    expect(await store.push(0, 1, [item('1'), item('2')])).toEqual([{ outcome: 'queued' }, { outcome: 'queued' }]);
    expect((await store.partitionState(0)).waiting).toBe(2);
    expect(await store.push(0, 1, [item('3'), item('4')])).toEqual([{ outcome: 'queued' }, { outcome: 'dropped-oldest', dropped: item('1') }]);
    expect((await store.partitionState(0)).waiting).toBe(3);
    const taken = await store.take(0, 'a', (await store.renew(0, 'a', false)).epoch, 3);
    expect(taken.items.map((i) => decodeRouteItem(i)?.id)).toEqual(['2', '3']);
  });

  it('assign and a claim take one new epoch each', async () => {
    const { store, epoch } = await owned('resend-claim');
    // assign moved the free partition (epoch 1), the claim took epoch 2.
    expect(epoch).toBe(2);
    expect((await store.partitionState(0)).epoch).toBe(2);
  });

  it('take takes one batch and does not count a replay', async () => {
    const { store, epoch } = await owned('resend-take');
    await store.push(0, 1, [item('1'), item('2'), item('3')]);
    const taken = await store.take(0, 'a', epoch, 3);
    expect(taken).toMatchObject({ status: 'ok', replays: 0 });
    expect(taken.items).toHaveLength(2);
    expect(await store.partitionState(0)).toMatchObject({ waiting: 1, inFlight: 2 });
    // The same runner asking again gets the same batch, still not counted as a replay.
    expect(await store.take(0, 'a', epoch, 3)).toEqual(taken);
  });

  it('ack buries a failed task once; re-drive brings it back once', async () => {
    const { store, epoch } = await owned('resend-ack');
    await store.push(0, 1, [item('1'), item('2')]);
    await store.take(0, 'a', epoch, 3);
    // The second run finds both gone (the first acked them): 'partial', whose events are not announced.
    expect(await store.ack(0, 'a', epoch, [1], [[2, '{"name":"Error","message":"x","attempts":1}']])).toBe('partial');
    expect(await store.partitionState(0)).toMatchObject({ waiting: 0, inFlight: 0, dead: 1 });
    expect(await store.redriveDead(0, 10)).toBe(1);
    expect(await store.partitionState(0)).toMatchObject({ waiting: 1, dead: 0 });
  });

  it('revoke, release and leave move the partition one step each', async () => {
    const { store, epoch } = await owned('resend-release');
    expect(await store.assign(0, 'b', true)).toBe('revoking');
    expect(await store.partitionState(0)).toMatchObject({ owner: 'a', epoch, state: 'revoking' });
    // The repeat finds the partition handed over already: the runner ends either way.
    expect(['released', 'lost']).toContain(await store.release(0, 'a', epoch));
    expect(await store.partitionState(0)).toMatchObject({ owner: 'b', epoch: epoch + 1, state: 'active' });
    await store.leave(0, 'b', epoch + 1);
    expect(await store.partitionState(0)).toMatchObject({ owner: null, epoch: epoch + 2 });
  });

  it('membership scripts: heartbeat, lock, plan, departure', async () => {
    const { store } = await owned('resend-members');
    expect(await store.heartbeat('a')).toEqual([]);
    expect(await store.lock('a', 1000)).toBe(true);
    expect(await store.savePlan('a', ['a'])).toBe(true);
    expect(await store.heartbeat('a')).toEqual([0]);
    expect(await store.evict()).toMatchObject({ live: ['a'] });
    await store.depart('a');
    expect(await store.machines()).toEqual([]);
    expect(await store.lock('b', 1000)).toBe(true);
  });
});
