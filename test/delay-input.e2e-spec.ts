import type { Cluster, Redis } from 'ioredis';
import {
  InvalidOptionsError, InvalidPayloadError, InvalidSubmitOptionsError, InvalidTaskTypeError, InvalidTaskWorkerError,
  PayloadTooLargeError, RouteNotConfiguredError, UnknownTaskTypeError,
} from 'nestjs-distributed-queue';
import { connect, startQueueApp, workerClass, type QueueApp } from './support/queue-app';
import { getTargets, uniquePrefix } from './support/targets';

describe.each(getTargets().map((t) => [t.name, t] as const))('bad input on %s', (_name, target) => {
  let redis: Redis | Cluster;
  let app: QueueApp;
  const keyPrefix = uniquePrefix('input');
  beforeAll(async () => {
    redis = connect(target);
    app = await startQueueApp({ connection: target.connection, keyPrefix, workers: false, types: { known: {} }, maxPayloadBytes: 1000 });
  });
  afterAll(async () => {
    await app.close();
    redis.disconnect();
  });

  const cases: [string, () => Promise<unknown>, new (...args: never[]) => Error, RegExp][] = [
    ['empty type', () => app.submit.submit('', {}), InvalidTaskTypeError, /non-empty/],
    ['type with a brace', () => app.submit.submit('a{b}', {}), InvalidTaskTypeError, /braces/],
    ['unknown type', () => app.submit.submit('unknown.type', {}), UnknownTaskTypeError, /unknown\.type/],
    ['negative delay', () => app.submit.submit('known', {}, { delay: -5 }), InvalidSubmitOptionsError, /delay.*non-negative/],
    ['delay and runAt', () => app.submit.submit('known', {}, { delay: 5, runAt: Date.now() }), InvalidSubmitOptionsError, /either delay or runAt/],
    ['invalid runAt', () => app.submit.submit('known', {}, { runAt: new Date('nope') }), InvalidSubmitOptionsError, /runAt/],
    ['empty id', () => app.submit.submit('known', {}, { id: '' }), InvalidSubmitOptionsError, /"id"/],
    ['unknown submit option', () => app.submit.submit('known', {}, { dealy: 5 } as never), InvalidSubmitOptionsError, /dealy/],
    ['BigInt payload', () => app.submit.submit('known', { n: 1n }), InvalidPayloadError, /BigInt/],
    ['circular payload', () => { const o: Record<string, unknown> = {}; o.self = o; return app.submit.submit('known', o); }, InvalidPayloadError, /circular/i],
    ['undefined payload', () => app.submit.submit('known', undefined), InvalidPayloadError, /undefined/],
    ['function payload', () => app.submit.submit('known', () => 1), InvalidPayloadError, /function/],
    ['payload over the limit', () => app.submit.submit('known', 'x'.repeat(2000)), PayloadTooLargeError, /2002 bytes.*1000/],
    ['id of 100 kB', () => app.submit.submit('known', {}, { id: 'x'.repeat(102_400) }), InvalidSubmitOptionsError, /^.{0,300}102400 characters\)$/],
    ['delay past 100 years', () => app.submit.submit('known', {}, { delay: 101 * 365 * 24 * 3600_000 }), InvalidSubmitOptionsError, /delay.*100 years/],
    ['ordered task without the route queue', () => app.submit.submitOrdered('known', 'k', 1), RouteNotConfiguredError, /"route"/],
    ['one bad item in a batch', () => app.submit.submitMany('known', [{ payload: 1 }, { payload: 2, delay: -1 }]), InvalidSubmitOptionsError, /delay/],
  ];

  it.each(cases)('%s: a typed error naming the problem, nothing written', async (_label, call, ErrorClass, message) => {
    const error = await call().then(() => null, (e: Error) => e);
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error?.name).toBe(ErrorClass.name);
    expect(error?.message).toMatch(message);
    const keys = await scan(redis, `${keyPrefix}:*`);
    expect(keys).toEqual([]);
  });
});

describe.each(getTargets().map((t) => [t.name, t] as const))('public async methods on %s', (_name, target) => {
  let app: QueueApp;
  beforeAll(async () => {
    app = await startQueueApp({ connection: target.connection, keyPrefix: uniquePrefix('reject'), workers: false, types: { known: {} } });
  });
  afterAll(() => app.close());

  const calls: [string, () => Promise<unknown>, new (...args: never[]) => Error][] = [
    ['cancel with an empty id', () => app.submit.cancel('known', ''), InvalidSubmitOptionsError],
    ['cancel with a bad type', () => app.submit.cancel('', 'x'), InvalidTaskTypeError],
    ['reschedule with a bad delay', () => app.submit.reschedule('known', 'x', { delay: -1 }), InvalidSubmitOptionsError],
    ['submitMany with no array', () => app.submit.submitMany('known', null as never), InvalidSubmitOptionsError],
    ['submitOrderedMany without the route queue', () => app.submit.submitOrderedMany('known', []), RouteNotConfiguredError],
    ['getState with an empty id', () => app.inspect.getState('known', ''), InvalidSubmitOptionsError],
    ['listDead with a bad type', () => app.inspect.listDead('{x}'), InvalidTaskTypeError],
    ['redriveDead with an empty id', () => app.inspect.redriveDead('known', ['']), InvalidSubmitOptionsError],
    ['deleteDead with a bad type', () => app.inspect.deleteDead('', ['x']), InvalidTaskTypeError],
    ['getRouteStatus without the route queue', () => app.inspect.getRouteStatus(), RouteNotConfiguredError],
    ['listOrderedDead without the route queue', () => app.inspect.listOrderedDead(), RouteNotConfiguredError],
    ['redriveOrderedDead without the route queue', () => app.inspect.redriveOrderedDead(), RouteNotConfiguredError],
  ];

  it.each(calls)('%s rejects (never throws synchronously)', async (_label, call, ErrorClass) => {
    let returned: Promise<unknown> | undefined;
    expect(() => {
      returned = call();
    }).not.toThrow();
    await expect(returned).rejects.toThrow(ErrorClass);
  });
});

async function scan(redis: Redis | Cluster, pattern: string): Promise<string[]> {
  const nodes = 'nodes' in redis && typeof redis.nodes === 'function' ? (redis as Cluster).nodes('master') : [redis as Redis];
  const found = await Promise.all(nodes.map((n) => n.keys(pattern)));
  return found.flat();
}

describe('invalid module options and workers fail at start-up', () => {
  const [target] = getTargets();
  const starts: [string, () => Promise<QueueApp>, new (...args: never[]) => Error, RegExp][] = [
    ['unknown option', () => startQueueApp({ connection: target.connection, shutdownTimout: 5 } as never), InvalidOptionsError, /"shutdownTimout"/],
    ['negative timeout', () => startQueueApp({ connection: target.connection, shutdownTimeoutMs: -1 }), InvalidOptionsError, /"shutdownTimeoutMs"/],
    ['bad URL', () => startQueueApp({ connection: 'http://x' }), InvalidOptionsError, /"connection"/],
    ['bad per-type option', () => startQueueApp({ connection: target.connection, types: { t: { concurrency: 0 } } }), InvalidOptionsError, /"types\.t\.concurrency"/],
    ['bad backoff', () => startQueueApp({ connection: target.connection, defaults: { backoff: { type: 'linear' as never } } }), InvalidOptionsError, /"defaults\.backoff\.type"/],
    ['bad decorator option', () => startQueueApp({ connection: target.connection }, [workerClass('w', { timeoutMs: 0 }, () => 1)]), InvalidOptionsError, /@TaskWorker\('w'\)\.timeoutMs/],
    ['two workers for one type', () => startQueueApp({ connection: target.connection }, [workerClass('same', {}, () => 1), workerClass('same', {}, () => 2)]), InvalidTaskWorkerError, /"same" has two workers/],
  ];

  it.each(starts)('%s', async (_label, start, ErrorClass, message) => {
    const error = await start().then(
      async (app) => {
        await app.close();
        return null;
      },
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error?.message).toMatch(message);
  });

  it('an empty type is refused by the decorator itself', () => {
    expect(() => workerClass('', {}, () => 1)).toThrow(InvalidTaskTypeError);
  });
});
