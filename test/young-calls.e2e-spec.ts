/**
 * A script call's garbage dies young (the case V8's allocation-site pretenuring got wrong).
 *
 * What went wrong: V8 decided, while an application ran one task at a time, that the argument lists of the
 * library's script calls (built as an array literal grown by push) live long, and allocated them in the old
 * generation from then on. Dead in microseconds but old, each one kept the young strings it held (keys, ids,
 * payloads) alive through every young-generation collection until the next full one: 0.5 MB copied per
 * collection instead of 10 KB, pauses of 3–8 ms instead of about 1 in the middle of round trips, and the
 * submitAndWait p99 went from about 2.6 to 3 ms (bench/profile/awaited.ts). The lists are now made at their
 * length (`new Array(n)`), which V8 keeps young.
 *
 * The matrix: this is a property of the process, not of a server; one cell — after a few thousand round
 * trips, every script call's argument list is still allocated young (real Redis, the whole application).
 */
import { spawnChild } from './support/child';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';

jest.setTimeout(120_000);

describe('script calls: their argument lists are allocated young', () => {
  let server: RedisServerHandle;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.remove();
  });

  it('after 3,000 submitAndWait round trips, none of the next 1,000 round trips\' script calls has its argument list in the old generation', async () => {
    const child = spawnChild('test/support/young-calls.ts', { REDIS_URL: server.url });
    try {
      const report = await child.waitForMessage((m) => m?.type === 'young', 90_000);
      expect(report.total).toBeGreaterThanOrEqual(2000);
      expect(report.old).toBe(0);
    } finally {
      child.kill();
    }
  });
});
