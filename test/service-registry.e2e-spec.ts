import { InvalidArgumentError } from 'nestjs-distributed-queue';
import { defineScripts } from 'nestjs-distributed-queue/redis/script-loader';
import { TypeOwnedError } from 'nestjs-distributed-queue/errors';
import { ServiceRegistry, type ServiceTypeOptions } from 'nestjs-distributed-queue/service/service-registry';
import { redisReplayGuard } from 'nestjs-distributed-queue/service/replay-guard';
import { connect, useQueueApps } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';
import { sleep, waitFor } from './support/wait';

const opts: ServiceTypeOptions = { concurrency: 5, maxAttempts: 3, timeoutMs: 1000, backoff: { type: 'fixed', delayMs: 10 } };

describe.each(getTargets().map((t) => [t.name, t] as const))('service registry on %s', (_name, target) => {
  const { redis } = useQueueApps(target);

  const registry = (): ServiceRegistry => {
    const client = redis();
    defineScripts(client);
    return new ServiceRegistry(client, uniquePrefix('svc-reg'));
  };

  it('registers applications, their types and live instances; an instance past its heartbeat is gone', async () => {
    const r = registry();
    await r.register('billing', { id: 'b-2', url: 'http://127.0.0.1:3002/dq' }, { 'invoice.send': opts }, 60_000);
    await r.register('billing', { id: 'b-1', url: 'http://127.0.0.1:3001/dq' }, { 'invoice.remind': opts }, 2000);
    await r.register('mail', { id: 'm-1', url: 'http://127.0.0.1:4001/dq' }, { 'mail.send': opts }, 60_000);
    expect(await r.apps()).toEqual(['billing', 'mail']);
    expect(await r.types('billing')).toEqual({ 'invoice.send': opts, 'invoice.remind': opts });
    expect(await r.ownerOf('mail.send')).toBe('mail');
    expect(await r.ownerOf('nobody')).toBeNull();
    expect(await r.instances('billing')).toEqual([
      { id: 'b-1', url: 'http://127.0.0.1:3001/dq' },
      { id: 'b-2', url: 'http://127.0.0.1:3002/dq' },
    ]);
    // b-1 stops its heartbeat: it is not live after its ttl (Redis clock). NOTE: a ttl of 300 ms ran out before
    // the five calls above in a loaded full run.
    await waitFor(async () => (await r.instances('billing')).length === 1, { timeoutMs: 6000, message: 'b-1 expired' });
    expect(await r.instances('billing')).toEqual([{ id: 'b-2', url: 'http://127.0.0.1:3002/dq' }]);
    await r.leave('billing', 'b-2');
    expect(await r.instances('billing')).toEqual([]);
  });

  it('a type owned by another application is refused, naming both; bad names are refused, naming the argument', async () => {
    const r = registry();
    await r.register('billing', { id: 'b-1', url: 'http://127.0.0.1:3001/dq' }, { 'invoice.send': opts }, 60_000);
    const refused = r.register('mail', { id: 'm-1', url: 'http://127.0.0.1:4001/dq' }, { 'mail.send': opts, 'invoice.send': opts }, 60_000);
    await expect(refused).rejects.toBeInstanceOf(TypeOwnedError);
    await expect(refused).rejects.toThrow(/"invoice\.send" belongs to application "billing"/);
    // Nothing of the refused registration was written.
    expect(await r.apps()).toEqual(['billing']);
    expect(await r.ownerOf('mail.send')).toBeNull();
    await expect(r.register('bad app', { id: 'x', url: 'http://h/dq' }, {}, 1000)).rejects.toMatchObject({ argument: 'app' });
    await expect(r.register('a', { id: 'x', url: 'ftp://h' }, {}, 1000)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(r.register('a', { id: 'x', url: 'http://h/dq' }, {}, 1)).rejects.toMatchObject({ argument: 'ttlMs' });
  });

  it('tells the schedulers when instances or types change, and not on a plain renewal', async () => {
    const r = registry();
    const subscriber = connect(target);
    const heard: string[] = [];
    subscriber.on('message', (_channel: string, message: string) => heard.push(message));
    await subscriber.subscribe(r.keys.changes);
    /** Publishes a marker, waits for it (and a little longer), and returns what was heard before it. */
    const heardUntilNow = async (): Promise<string[]> => {
      const marker = `marker-${heard.length}`;
      await redis().publish(r.keys.changes, marker);
      await waitFor(() => heard.includes(marker), { timeoutMs: 3000, message: 'the marker' });
      await sleep(100);
      return heard.splice(0).filter((m) => m !== marker);
    };
    const b1 = { id: 'b-1', url: 'http://127.0.0.1:3001/dq' };
    await r.register('billing', b1, { 'invoice.send': opts }, 60_000);
    expect(await heardUntilNow()).toEqual(['billing']);
    await r.register('billing', b1, { 'invoice.send': opts }, 60_000);
    expect(await heardUntilNow()).toEqual([]);
    await r.register('billing', b1, { 'invoice.send': { ...opts, concurrency: 9 } }, 60_000);
    expect(await heardUntilNow()).toEqual(['billing']);
    await r.register('billing', { ...b1, url: 'http://127.0.0.1:3009/dq' }, { 'invoice.send': { ...opts, concurrency: 9 } }, 60_000);
    expect(await heardUntilNow()).toEqual(['billing']);
    await r.leave('billing', 'b-1');
    await r.leave('billing', 'b-1');
    expect(await heardUntilNow()).toEqual(['billing']);
    subscriber.disconnect();
  });

  it('the Redis replay guard sees a delivery id once across instances, until it expires', async () => {
    const prefix = uniquePrefix('svc-seen');
    const [a, b] = [redisReplayGuard(redis(), prefix, 'billing'), redisReplayGuard(redis(), prefix, 'billing')];
    expect(await a.firstSeen('invoice.send:1:1:x', 200)).toBe(true);
    expect(await b.firstSeen('invoice.send:1:1:x', 200)).toBe(false);
    await waitFor(() => b.firstSeen('invoice.send:1:1:x', 60_000), { timeoutMs: 3000, message: 'the id expired' });
  });
});
