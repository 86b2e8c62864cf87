import { eventsOfEntry } from 'nestjs-distributed-queue/events/event-entry';
import type { StreamEntry } from 'nestjs-distributed-queue/events/stream-entry';
import { killAllChildren, spawnChild } from './support/child';
import { keysOf, useQueueApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { waitFor } from './support/wait';

/*
 * Failure matrix of fleet events (docs/failure-matrix.md, section 1): the crash of the only follower after it
 * raised its followed flag (W3). Completions, the hot path, are written to the stream only while a follower's
 * flag key exists (30 s TTL, set again every 10 s): once the SIGKILLed follower's flag expires, the workers
 * stop writing completions, and go on writing failures. Single server and cluster, at once. About 30 s: the
 * flag's TTL.
 */

type Queues = ReturnType<typeof useQueueApps>;

/** The test on one target, with its own apps (closed after the test) and Redis connection. */
async function flagExpires(target: RedisTarget, { start, redis }: Queues): Promise<void> {
  const prefix = uniquePrefix('evm-flag');
  const type = 'ff';
  const keys = keysOf(prefix, type);
  const W = workerClass<string>(type, { maxAttempts: 1 }, (task) => {
    if (task.payload === 'fail') throw new Error('no');
  });
  const app = await start({ connection: target.connection, keyPrefix: prefix }, [W]);
  const follower = spawnChild('test/fixtures/fleet-app.ts', { DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_TYPE: type });
  await follower.waitForMessage((m) => m.type === 'ready', 60_000);
  const logged = async () => {
    const entries = (await redis().xrange(keys.log, '-', '+')) as StreamEntry[];
    return entries.flatMap((e) => eventsOfEntry(e, type)).map((e) => `${e.event}:${e.task.id}`);
  };
  await app.submit.submit(type, 'ok', { id: 'while' });
  await waitFor(async () => (await logged()).includes('completed:while'), { timeoutMs: 10_000, message: 'a completion written while followed' });
  await follower.waitForMessage((m) => m.type === 'event' && m.id === 'while', 10_000);

  follower.kill('SIGKILL');
  await follower.exited;
  const ttl = await redis().pttl(keys.followed);
  expect(ttl).toBeGreaterThan(0);
  expect(ttl).toBeLessThanOrEqual(30_000);
  await waitFor(async () => (await redis().exists(keys.followed)) === 0, { timeoutMs: ttl + 10_000, intervalMs: 500, message: 'the flag expired' });

  await app.submit.submitMany(type, [{ id: 'after', payload: 'ok' }, { id: 'bad', payload: 'fail' }]);
  await waitFor(async () => (await app.inspect.getState(type, 'bad')) === 'dead' && (await app.inspect.getState(type, 'after')) === 'done', {
    timeoutMs: 10_000, message: 'both ran',
  });
  expect(await logged()).toEqual(['completed:while', 'failed:bad', 'dead:bad']);
}

describe(`fleet events flag on ${getTargets().map((t) => t.name).join(' and ')}`, () => {
  const targets = getTargets().map((t) => [t, useQueueApps(t)] as const);
  afterEach(() => killAllChildren());

  // NOTE: the targets at once (separate servers, prefixes, apps and followers): each waits out the flag's TTL.
  it('the only follower SIGKILLed: once its flag expires (30 s at most) completions are no longer written, failures still are', async () => {
    const results = await Promise.allSettled(targets.map(([target, queues]) => flagExpires(target, queues)));
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [[targets[i][0].name, r.reason as Error] as const] : []));
    for (const [name, error] of failed) error.message = `on ${name}: ${error.message}`;
    if (failed.length) throw failed[0][1];
  }, 90_000);
});
